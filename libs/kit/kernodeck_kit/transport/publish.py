"""Publishing on RabbitMQ: the outbox's events, confirmed by the broker, and the connections that publish.

A publishing connection declines the broker's connection.blocked notices (py-amqp's documented
`negotiate_capabilities`): with them on, py-amqp's `basic_publish` first reads the socket for a notice before
every message, under eventlet a trip through the hub on which the process runs whatever else is ready. The
kit never acts on a notice; a blocked broker shows as confirms that do not come. What it buys:
bench/bench_transport.py ("events published").
"""

import logging
from collections.abc import Callable

from amqp import Message, spec
from kombu import Connection
from kombu.transport import pyamqp

from kernodeck_kit.outbox import OutboxRow, Published, Unroutable, WhileConfirming
from kernodeck_kit.settings import amqp_ssl

log = logging.getLogger(__name__)

CONFIRM_TIMEOUT_S = 10.0


class _QuietAmqpConnection(pyamqp.Connection):
    negotiate_capabilities = {**pyamqp.Connection.negotiate_capabilities, "connection.blocked": False}


class _QuietTransport(pyamqp.Transport):
    Connection = _QuietAmqpConnection


def publishing_connection(amqp_uri: str, **options) -> Connection:
    """A kombu connection to `amqp_uri` that asks for no connection.blocked notices (see above); over TLS with
    the broker's certificate checked (amqp_ssl)."""
    options.setdefault("ssl", amqp_ssl(amqp_uri))
    return Connection(amqp_uri, transport=_QuietTransport, **options)


class AmqpPublisher:
    """Publishes outbox rows the way nameko's EventDispatcher does (JSON, persistent, on `<source>.events`),
    but mandatory and confirmed. `publisher(row)` publishes one (Unroutable when no queue receives
    it); `publisher.many(rows)` publishes them all on one channel, in order, before it waits for their confirms,
    so a block's events cost one round trip to the broker, not one each."""

    def __init__(self, amqp_uri: str, connect: Callable[[str], Connection] = publishing_connection):
        self.amqp_uri = amqp_uri
        self.connect = connect  # bench/bench_transport.py sets kombu's own Connection as its baseline
        self._idle: list[_ConfirmChannel] = []  # channels in confirm mode, one per concurrent publisher
        self._closed = False

    def __call__(self, row: OutboxRow) -> None:
        published = self.many([row])
        if published.unroutable:
            raise Unroutable()
        if published.failed:
            raise ConnectionError("the broker did not confirm the event")

    def many(self, rows: list[OutboxRow], while_confirming: WhileConfirming | None = None) -> Published:
        """Raises when the broker cannot be reached: then none of the rows is known to be published."""
        reused = bool(self._idle)
        channel = self._idle.pop() if reused else _ConfirmChannel(self.connect(self.amqp_uri))
        try:
            published = channel.publish(rows, while_confirming)
        except Exception:
            channel.close()
            if not reused:
                raise
            # A kept channel may have lost its connection (the broker restarted): once more on a fresh one.
            channel = _ConfirmChannel(self.connect(self.amqp_uri))
            try:
                published = channel.publish(rows, while_confirming)
            except Exception:
                channel.close()
                raise
        if self._closed:
            channel.close()
        else:
            self._idle.append(channel)
        return published

    def close(self) -> None:
        """Close the kept channels' connections, and each channel in use once its batch is done."""
        self._closed = True
        while self._idle:
            self._idle.pop().close()


class _ConfirmChannel:
    """One connection's channel in confirm mode; a row's message id is its event id, which tells which rows the
    broker returned."""

    def __init__(self, connection: Connection):
        self.connection = connection
        self.channel = self.connection.channel()
        self.channel.confirm_select()
        self.channel.events["basic_ack"].add(self._acked)
        self.channel.events["basic_nack"].add(self._nacked)
        self.channel.events["basic_return"].add(self._returned)
        self.declared: set[str] = set()
        self.last_tag = 0  # the broker numbers a channel's messages from 1
        self.waiting: dict[int, OutboxRow] = {}
        self.returned: set[str] = set()
        self.nacked: list[OutboxRow] = []

    def publish(self, rows: list[OutboxRow], while_confirming: WhileConfirming | None = None) -> Published:
        self.returned.clear()
        self.nacked.clear()
        for row in rows:
            exchange = f"{row.source}.events"
            if exchange not in self.declared:
                self.channel.exchange_declare(exchange, "topic", durable=True, auto_delete=False)
                self.declared.add(exchange)
            message = Message(
                row.payload,
                content_type="application/json",
                content_encoding="utf-8",
                delivery_mode=2,
                message_id=row.event_id,
            )
            self.channel.basic_publish(message, exchange, row.event_type, mandatory=True)
            self.last_tag += 1
            self.waiting[self.last_tag] = row
        if while_confirming is not None:
            while_confirming()
        while self.waiting:
            self.channel.wait([spec.Basic.Ack, spec.Basic.Nack], timeout=CONFIRM_TIMEOUT_S)
        nacked = {row.event_id for row in self.nacked}
        published = Published()
        for row in rows:
            if row.event_id in nacked:
                published.failed.append(row)
            elif row.event_id in self.returned:
                published.unroutable.append(row)
            else:
                published.confirmed.append(row)
        return published

    def close(self) -> None:
        try:
            self.connection.release()
        except Exception:
            log.debug("closing a broken publishing connection failed", exc_info=True)

    def _settled(self, tag: int, multiple: bool) -> list[OutboxRow]:
        tags = [t for t in self.waiting if t <= tag] if multiple else [tag]
        return [self.waiting.pop(t) for t in tags if t in self.waiting]

    def _acked(self, tag: int, multiple: bool) -> None:
        self._settled(tag, multiple)

    def _nacked(self, tag: int, multiple: bool) -> None:
        self.nacked.extend(self._settled(tag, multiple))

    def _returned(self, _exc, _exchange, _routing_key, message) -> None:
        # The broker sends a message's return before its confirm.
        self.returned.add(message.properties.get("message_id"))


def amqp_publisher(amqp_uri: str) -> AmqpPublisher:
    """Publish outbox rows, mandatory and confirmed (see AmqpPublisher)."""
    return AmqpPublisher(amqp_uri)
