"""Asyncio client for nameko 2.14 RPC over AMQP (aio-pika).

The wire protocol, as nameko.rpc.MethodProxy and nameko.rpc.Responder speak it:

- request: published on the durable topic exchange ``nameko-rpc`` with routing
  key ``<service>.<method>`` and JSON body ``{"args": [...], "kwargs": {...}}``;
  properties reply_to (a routing key on ``nameko-rpc``, not a queue name),
  correlation_id, content_type application/json; context travels in
  ``nameko.*`` headers, here ``nameko.call_id_stack``, and for an operator's call
  ``nameko.operator`` (the account the service checks again: kernodeck_kit.operators).
- reply: published by the service on ``nameko-rpc`` with routing key =
  reply_to, body ``{"result": ..., "error": null | {"exc_type", "exc_path",
  "exc_args", "value"}}``, encoded with the request's content type.
- JSON is kombu's: datetime, date, time, Decimal, UUID and bytes travel as
  ``{"__type__": ..., "__value__": ...}`` envelopes, decoded on both sides.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import uuid
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

import aio_pika
from aio_pika.abc import (
    AbstractExchange,
    AbstractIncomingMessage,
    AbstractRobustConnection,
)
from aiormq.exceptions import AMQPError, ChannelInvalidStateError, PublishError

log = logging.getLogger(__name__)

RPC_EXCHANGE = "nameko-rpc"
DEFAULT_URL = "amqp://guest:guest@127.0.0.1:5672/"


class RpcError(Exception):
    """Base of the errors raised by RpcClient."""


class RemoteError(RpcError):
    """The service raised; the fields are those of nameko.exceptions.serialize."""

    def __init__(self, exc_type: str, exc_path: str, exc_args: list, value: str):
        super().__init__(f"{exc_type} {value}")
        self.exc_type = exc_type
        self.exc_path = exc_path
        self.exc_args = exc_args
        self.value = value


class RpcTimeout(RpcError):
    """No reply came within the timeout."""


class ServiceUnavailable(RpcError):
    """The broker is unreachable, or no queue takes the service's requests."""


# kombu.utils.json envelopes; datetime comes before date (a datetime is a date).
_ENCODERS: tuple[tuple[type, str, Any], ...] = (
    (datetime, "datetime", datetime.isoformat),
    (date, "date", date.isoformat),
    (time, "time", time.isoformat),
    (Decimal, "decimal", str),
    (uuid.UUID, "uuid", lambda value: {"hex": value.hex}),
)
_DECODERS: dict[str, Any] = {
    "datetime": datetime.fromisoformat,
    "date": date.fromisoformat,
    "time": time.fromisoformat,
    "decimal": Decimal,
    "uuid": lambda value: uuid.UUID(**value),
    "bytes": str.encode,
    "base64": base64.b64decode,
}


def _envelope(obj: Any) -> dict[str, Any]:
    for cls, marker, encode in _ENCODERS:
        if isinstance(obj, cls):
            return {"__type__": marker, "__value__": encode(obj)}
    if isinstance(obj, bytes):
        try:
            return {"__type__": "bytes", "__value__": obj.decode()}
        except UnicodeDecodeError:
            return {"__type__": "base64", "__value__": base64.b64encode(obj).decode()}
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def _unwrap(obj: dict[str, Any]) -> Any:
    if obj.keys() == {"__type__", "__value__"} and obj["__type__"] in _DECODERS:
        return _DECODERS[obj["__type__"]](obj["__value__"])
    return obj


def dumps(obj: Any) -> bytes:
    """Encode as kombu's json serializer does (what nameko services decode)."""
    return json.dumps(obj, default=_envelope, separators=(",", ":")).encode()


def loads(data: bytes) -> Any:
    """Decode a body from a nameko service, kombu envelopes included."""
    return json.loads(data, object_hook=_unwrap)


class RpcClient:
    """Calls nameko services; one instance (one AMQP connection) per process.

    ``call`` may run concurrently from many tasks; replies are matched to
    callers by correlation id.
    """

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        timeout: float = 5.0,
        name: str = "gateway",
        reconnect_interval: float = 1.0,
    ) -> None:
        self._url = url
        self._timeout = timeout
        self._name = name
        self._reconnect_interval = reconnect_interval
        self._connection: AbstractRobustConnection | None = None
        self._exchange: AbstractExchange | None = None
        self._reply_to = ""
        # True only while the reply queue is declared, bound and consumed.
        self._ready = False
        self._pending: dict[str, asyncio.Future[Any]] = {}

    @property
    def connected(self) -> bool:
        """The reply queue is declared, bound and consumed: calls can be made."""
        return self._ready

    async def connect(self) -> None:
        if self._connection is not None:
            raise RuntimeError("RpcClient is already connected")
        try:
            connection = await aio_pika.connect_robust(
                self._url,
                timeout=self._timeout,
                reconnect_interval=self._reconnect_interval,
                client_properties={"connection_name": f"{self._name} rpc client"},
            )
        except (AMQPError, OSError) as exc:
            raise ServiceUnavailable(f"broker unreachable: {exc}") from exc
        try:
            # on_return_raises: an unroutable mandatory publish raises PublishError.
            channel = await connection.channel(on_return_raises=True)
            exchange = await channel.declare_exchange(RPC_EXCHANGE, aio_pika.ExchangeType.TOPIC, durable=True)
            reply_to = str(uuid.uuid4())
            # The robust channel re-declares, re-binds and re-consumes this queue
            # under the same name after a reconnection, so reply_to stays valid.
            queue = await channel.declare_queue(f"rpc.reply-{self._name}-{reply_to}", exclusive=True, auto_delete=True)
            await queue.bind(exchange, routing_key=reply_to)
            await queue.consume(self._on_reply, no_ack=True)
        except BaseException:
            await connection.close()
            raise
        connection.close_callbacks.add(self._on_connection_lost)
        connection.reconnect_callbacks.add(self._on_reconnected)
        self._connection, self._exchange, self._reply_to = connection, exchange, reply_to
        self._ready = True

    async def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()  # fails the pending calls via _on_connection_lost

    async def call(
        self,
        service: str,
        method: str,
        /,
        *args: Any,
        timeout: float | None = None,
        operator: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """Call ``service.method(*args, **kwargs)`` and return its result; ``operator``: the operator account
        the call is made for (an operator RPC runs for no one else).

        Raises RemoteError, RpcTimeout or ServiceUnavailable.
        """
        if not self._ready:
            raise ServiceUnavailable("not connected to the broker")
        assert self._exchange is not None
        timeout = self._timeout if timeout is None else timeout
        correlation_id = str(uuid.uuid4())
        headers: dict[str, Any] = {"nameko.call_id_stack": [f"{self._name}.call.{correlation_id}"]}
        if operator is not None:
            headers["nameko.operator"] = operator
        message = aio_pika.Message(
            dumps({"args": args, "kwargs": kwargs}),
            content_type="application/json",
            content_encoding="utf-8",
            correlation_id=correlation_id,
            reply_to=self._reply_to,
            headers=headers,
            # Unlike nameko (persistent, no expiry): a request nobody waits for
            # any more, e.g. queued for a stopped service, is dropped by the
            # broker instead of running later or after a broker restart.
            delivery_mode=aio_pika.DeliveryMode.NOT_PERSISTENT,
            expiration=timeout,
        )
        # Registered before publishing: the reply can beat the publisher confirm.
        future = asyncio.get_running_loop().create_future()
        self._pending[correlation_id] = future
        try:
            async with asyncio.timeout(timeout):
                await self._exchange.publish(message, routing_key=f"{service}.{method}", mandatory=True)
                return await future
        except TimeoutError:
            raise RpcTimeout(f"{service}.{method}: no reply within {timeout} s") from None
        except PublishError:
            raise ServiceUnavailable(f"{service}.{method}: no queue for service {service!r}") from None
        except (AMQPError, ChannelInvalidStateError, ConnectionError) as exc:
            raise ServiceUnavailable(f"{service}.{method}: {exc!r}") from exc
        finally:
            self._pending.pop(correlation_id, None)

    async def _on_reply(self, message: AbstractIncomingMessage) -> None:
        future = self._pending.pop(message.correlation_id or "", None)
        if future is None or future.done():
            log.debug("ignoring a reply nobody waits for: %s", message.correlation_id)
            return
        reply = loads(message.body)
        error = reply.get("error")
        if error:
            future.set_exception(
                RemoteError(
                    error.get("exc_type"),
                    error.get("exc_path"),
                    error.get("exc_args"),
                    error.get("value"),
                )
            )
        else:
            future.set_result(reply.get("result"))

    def _on_connection_lost(self, _connection: Any, exc: BaseException | None) -> None:
        # The exclusive reply queue dies with the connection, and with it any
        # reply not yet delivered: nobody will answer the pending calls.
        self._ready = False
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(ServiceUnavailable(f"connection to the broker lost: {exc!r}"))

    def _on_reconnected(self, _connection: Any) -> None:
        # Called once the robust connection has restored the channel, so the
        # reply queue is bound again.
        self._ready = True
