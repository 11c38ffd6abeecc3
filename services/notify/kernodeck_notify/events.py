"""The services' events, from RabbitMQ with aio-pika, each acknowledged once its outcome is committed.

nameko publishes an event on the durable topic exchange `<source>.events`
with the event type as routing key and its JSON as body. Notify binds one
durable queue of its own, `notify.events`, to every event it reads, and
takes those that have arrived together, in one transaction, in the order they
arrived (a busy block's hundreds of payments come at once). An event that cannot be
read (a malformed body, a newer schema), or whose values the database
refuses for good, is set aside in `notify.dead-letters` for an operator
instead of blocking the queue; `kernodeck-admin dead-letters` (the kit's) lists,
replays or drops them, a replayed one coming back by the default exchange
with its origin in the kit's headers.
"""

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable

import aio_pika
from aio_pika.abc import AbstractIncomingMessage, AbstractQueue
from aiormq.exceptions import AMQPError, ChannelInvalidStateError
from sqlalchemy.exc import DataError, IntegrityError

from kernodeck_contracts.events import ALL_EVENTS, Event, TelegramLinkRequested, TelegramUnlinkRequested
from kernodeck_kit import dead_letters
from kernodeck_kit.metrics import EVENTS_DEAD_LETTERED
from kernodeck_kit.types import utcnow
from kernodeck_kit.units import Units
from kernodeck_notify.database import in_thread
from kernodeck_notify.domain.notices import TOLD_EVENTS
from kernodeck_notify.use_cases import NotifyUnit, apply_events

QUEUE = "notify.events"
DEAD_LETTERS = dead_letters.queue_name("notify")
PREFETCH = 100
READ_EVENTS: tuple[type[Event], ...] = (*TOLD_EVENTS, TelegramLinkRequested, TelegramUnlinkRequested)
EVENT_TYPES = {(event.source, event.type): event for event in ALL_EVENTS}

log = logging.getLogger(__name__)


def decode(message: AbstractIncomingMessage) -> Event:
    """The event a message carries; ValueError when it is not one notify reads."""
    headers = message.headers or {}  # a replayed dead letter says where it was first published
    source = str(headers.get(dead_letters.EXCHANGE, message.exchange or "")).removesuffix(".events")
    routing_key = str(headers.get(dead_letters.ROUTING_KEY, message.routing_key or ""))
    event_type = EVENT_TYPES.get((source, routing_key))
    if event_type is None:
        raise ValueError(f"no event {source}.{routing_key}")
    return event_type.from_message(json.loads(message.body))


async def bind(channel: aio_pika.abc.AbstractChannel) -> AbstractQueue:
    """Declare notify's queues (idempotent) and bind them to the events it reads."""
    dead = await channel.declare_exchange(DEAD_LETTERS, aio_pika.ExchangeType.FANOUT, durable=True)
    await (await channel.declare_queue(DEAD_LETTERS, durable=True)).bind(dead)
    queue = await channel.declare_queue(QUEUE, durable=True, arguments={"x-dead-letter-exchange": DEAD_LETTERS})
    for event in READ_EVENTS:
        exchange = await channel.declare_exchange(f"{event.source}.events", aio_pika.ExchangeType.TOPIC, durable=True)
        await queue.bind(exchange, routing_key=event.type)
    return queue


async def consume(
    queue: AbstractQueue, units: Units[NotifyUnit], public_url: str, on_queued: Callable[[], None]
) -> None:
    """Apply the events until cancelled: those already arrived together, in one transaction (a busy block's
    hundreds of payments come at once), in the order they arrived."""
    arrived: asyncio.Queue[AbstractIncomingMessage] = asyncio.Queue()

    async def receive(message: AbstractIncomingMessage) -> None:
        arrived.put_nowait(message)

    tag = await queue.consume(receive)
    try:
        while True:
            messages = [await arrived.get()]
            while len(messages) < PREFETCH and not arrived.empty():
                messages.append(arrived.get_nowait())
            if await _apply_all(messages, units, public_url):
                on_queued()
    finally:
        with contextlib.suppress(AMQPError, ChannelInvalidStateError, ConnectionError):
            await queue.cancel(tag)


async def _apply_all(messages: list[AbstractIncomingMessage], units: Units[NotifyUnit], public_url: str) -> int:
    """Applies and acknowledges `messages`; how many chat messages that queued. An event that cannot be read
    is set aside; when the database refuses a batch, its events are applied one by one, so that only what it
    refuses is set aside."""
    readable = []
    for message in messages:
        try:
            readable.append((message, decode(message)))
        except ValueError as error:  # a malformed body, or one pydantic refuses
            await _set_aside(message, str(error))
    if not readable:
        return 0
    queued = await in_thread(_apply, units, [event for _, event in readable], public_url)
    if queued is None:
        if len(readable) > 1:
            return sum([await _apply_all([message], units, public_url) for message, _ in readable])
        await _set_aside(readable[0][0], "the database refused what it carries")
        return 0
    for message, event in readable:
        await _ack(message, event)
    return queued


async def _ack(message: AbstractIncomingMessage, event: Event) -> None:
    try:
        await message.ack()
    except (AMQPError, ChannelInvalidStateError, ConnectionError):
        # The connection dropped: the broker delivers the event again, and it is recognised then.
        log.warning("an event's acknowledgement was lost", extra={"event_id": event.event_id})


def _apply(units: Units[NotifyUnit], events: list[Event], public_url: str) -> int | None:
    """The messages queued; None when the database refuses the events' values for good (a value too long for
    its column...), which no retry would change. A database that is away raises, and is tried again."""
    try:
        return apply_events(units, events, public_url, utcnow())
    except (DataError, IntegrityError):
        log.exception("events the database refuses", extra={"event_ids": [event.event_id for event in events]})
        return None


async def _set_aside(message: AbstractIncomingMessage, error: str) -> None:
    EVENTS_DEAD_LETTERED.labels("notify").inc()
    log.error(
        "an event could not be applied: set aside",
        extra={"exchange": message.exchange, "routing_key": message.routing_key, "error": error[:300]},
    )
    await message.reject(requeue=False)
