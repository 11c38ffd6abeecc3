"""Dead letters: events a service could not handle, set aside in `<service>.dead-letters` for an operator.

A message set aside keeps its body and its headers, and says in headers
where it came from (`x-kernodeck-exchange`, `x-kernodeck-routing-key`,
`x-kernodeck-queue`), after how many deliveries and why. Notify (an asyncio
process) sets its own aside by rejecting them into the same-named queue,
where the broker records the origin in `x-death`; both kinds are read here.

`peek`, `replay` and `drop` are what `kernodeck-admin dead-letters` runs: a
replayed message goes back to the queue it failed in (by the default
exchange, its origin in the headers) with its delivery count reset.
"""

import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from kombu import Connection, Exchange, Queue
from kombu.message import Message

from kernodeck_kit.settings import amqp_ssl

DELIVERIES = "x-kernodeck-deliveries"
EXCHANGE = "x-kernodeck-exchange"
ROUTING_KEY = "x-kernodeck-routing-key"
QUEUE = "x-kernodeck-queue"
ERROR = "x-kernodeck-error"
ERROR_CHARS = 500


def queue_name(service: str) -> str:
    return f"{service}.dead-letters"


def dead_letter_queue(service: str) -> Queue:
    """The durable queue (and the fanout exchange of the same name that feeds it) of `service`'s dead letters."""
    name = queue_name(service)
    return Queue(name, Exchange(name, type="fanout", durable=True), durable=True)


def origin(message: Message) -> dict[str, str]:
    """Where `message` was first published, and the queue it was consumed from, as headers."""
    headers = message.headers or {}
    if EXCHANGE in headers:
        return {key: headers[key] for key in (EXCHANGE, ROUTING_KEY, QUEUE) if key in headers}
    deaths = headers.get("x-death") or []
    if deaths:  # set aside by the broker (notify's reject): it kept the origin
        death = deaths[-1]
        return {EXCHANGE: death["exchange"], ROUTING_KEY: death["routing-keys"][0], QUEUE: death["queue"]}
    info = message.delivery_info
    return {EXCHANGE: info.get("exchange", ""), ROUTING_KEY: info.get("routing_key", "")}


@dataclass(frozen=True)
class DeadLetter:
    id: str  # the event's id, or a digest of a body that carries none
    exchange: str
    routing_key: str
    queue: str
    deliveries: int
    error: str
    body: str

    @classmethod
    def of(cls, message: Message) -> "DeadLetter":
        headers = message.headers or {}
        where = origin(message)
        body = message.body.decode(errors="replace") if isinstance(message.body, bytes) else str(message.body)
        return cls(
            id=_event_id(body) or hashlib.sha256(body.encode()).hexdigest()[:16],
            exchange=where.get(EXCHANGE, ""),
            routing_key=where.get(ROUTING_KEY, ""),
            queue=where.get(QUEUE, ""),
            deliveries=int(headers.get(DELIVERIES, 0)),
            error=str(headers.get(ERROR, "rejected" if headers.get("x-death") else "")),
            body=body,
        )


def _event_id(body: str) -> str | None:
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    event_id = payload.get("event_id") if isinstance(payload, dict) else None
    return event_id if isinstance(event_id, str) else None


def republish(channel, message: Message, routing_key: str, exchange: str = "", **headers) -> None:
    """Publish `message`'s body again, as it was encoded, with its headers updated: confirmed by the broker,
    mandatory (an error when no queue receives it)."""
    channel.basic_publish(
        channel.prepare_message(
            message.body,
            content_type=message.content_type,
            content_encoding=message.content_encoding,
            headers={**(message.headers or {}), **headers},
            properties={"delivery_mode": 2},
        ),
        exchange=exchange,
        routing_key=routing_key,
        mandatory=True,
    )


@contextmanager
def _taken(amqp_uri: str, service: str, limit: int) -> Iterator[tuple[object, list[Message]]]:
    """Up to `limit` dead letters, taken unacknowledged: those not acknowledged go back when the channel closes."""
    with Connection(amqp_uri, ssl=amqp_ssl(amqp_uri), transport_options={"confirm_publish": True}) as connection:
        channel = connection.channel()
        queue = dead_letter_queue(service)(channel)
        queue.declare()
        messages = []
        while len(messages) < limit and (message := queue.get(no_ack=False)) is not None:
            messages.append(message)
        try:
            yield channel, messages
        finally:
            channel.close()


def peek(amqp_uri: str, service: str, limit: int = 1000) -> list[DeadLetter]:
    """The oldest `limit` dead letters of `service`, left where they are."""
    with _taken(amqp_uri, service, limit) as (_channel, messages):
        return [DeadLetter.of(message) for message in messages]


def _each(amqp_uri: str, service: str, ids: set[str] | None, act: Callable[[object, Message], None]) -> list[str]:
    done = []
    with _taken(amqp_uri, service, limit=100_000) as (channel, messages):
        for message in messages:
            letter = DeadLetter.of(message)
            if ids is None or letter.id in ids:
                act(channel, message)
                message.ack()
                done.append(letter.id)
    return done


def replay(amqp_uri: str, service: str, ids: set[str] | None = None) -> list[str]:
    """Send the dead letters of `ids` (all when None) back to the queues they failed in; their ids."""

    def send_back(channel, message: Message) -> None:
        where = origin(message)
        if where.get(QUEUE):
            republish(channel, message, where[QUEUE], **where, **{DELIVERIES: 1})
        else:  # the queue it failed in is not known: to every consumer of the event, each idempotent
            republish(channel, message, where[ROUTING_KEY], exchange=where[EXCHANGE], **{DELIVERIES: 1})

    return _each(amqp_uri, service, ids, send_back)


def drop(amqp_uri: str, service: str, ids: set[str] | None = None) -> list[str]:
    """Remove the dead letters of `ids` (all when None) for good; their ids."""
    return _each(amqp_uri, service, ids, lambda _channel, _message: None)
