"""The `rpc` entrypoint services declare: nameko's, with a cheaper reply path.

nameko's Responder encodes each result twice, takes a pooled producer and waits for the broker's confirm of
every reply before acking the request. Here a reply is encoded once and published, unconfirmed, on one
connection the service keeps for its replies; then the request is acked as before. A confirm would only say
that the broker took the reply, not that its caller, whose reply queue is exclusive and never stored, gets it:
a reply lost either way leaves the caller to its own timeout. What a confirm did catch, a connection the broker
had closed, is read before each publish, and a publish that fails on a dead connection goes again on a new one.
What it buys: bench/bench_transport.py ("rpc replies").

The call's context keeps who sent it as the broker vouches (`broker_user`, the message's user_id property, which
RabbitMQ checks against the connection's user; a header of that name from the caller is dropped): the
operator check (kernodeck_kit.operators) reads it.

Text no service can keep (NUL, lone surrogates: kernodeck_contracts.text) is refused in any argument with a
validation error before the entrypoint runs, whoever the caller.

A service uses this `rpc` for all of its entrypoints or none: nameko's would consume the same queue.
"""

import inspect
import logging
import select

import amqp
import kombu.serialization
from eventlet import patcher
from eventlet.semaphore import Semaphore
from nameko import rpc as nameko_rpc
from nameko.constants import (
    AMQP_SSL_CONFIG_KEY,
    AMQP_URI_CONFIG_KEY,
    LOGIN_METHOD_CONFIG_KEY,
)
from nameko.exceptions import IncorrectSignature, UnserializableValueError, serialize

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.text import unstorable_fields
from kernodeck_kit.transport.publish import publishing_connection

BROKER_USER = "broker_user"  # the context key of the user the broker says sent a request

log = logging.getLogger(__name__)

# The process's real poll: asking the kernel whether the broker wrote anything must not yield.
_poll = patcher.original("select").poll
_BROKER_SPOKE = select.POLLIN | select.POLLERR | select.POLLHUP
NOT_PERSISTENT = 1  # the reply queue is not durable: a persistent reply would be kept no longer


class ReplyConnection:
    """One AMQP connection and channel that publish a service's replies, opened on first use and again
    after the broker closed them; green threads take turns on it."""

    def __init__(self, amqp_uri: str, name: str, ssl=None, login_method=None):
        self._connection = publishing_connection(
            amqp_uri,
            ssl=ssl,
            login_method=login_method,
            heartbeat=0,  # it only writes: a dead connection is found before each publish instead
            transport_options={"client_properties": {"connection_name": f"{name} rpc replies"}},
        )
        self._channel = None
        self._poller = None
        self._turn = Semaphore()

    def publish(self, message: amqp.Message, exchange: str, routing_key: str) -> None:
        with self._turn:
            try:
                self._open().basic_publish(message, exchange, routing_key)
            except self._connection.connection_errors:
                log.info("the rpc reply connection failed; publishing on a new one", exc_info=True)
                self._drop()
                self._open().basic_publish(message, exchange, routing_key)

    def close(self) -> None:
        with self._turn:
            self._drop()

    def _open(self):
        if self._channel is not None and self._poller.poll(0) and not self._still_open():
            log.info("the broker closed the rpc reply connection; opening a new one")
            self._drop()
        if self._channel is None:
            self._connection.ensure_connection(max_retries=3)
            self._channel = self._connection.channel()
            self._poller = _poll()
            self._poller.register(self._connection.connection.sock, _BROKER_SPOKE)
        return self._channel

    def _still_open(self) -> bool:
        """Reads a frame the broker sent: False when it closed the connection or the socket."""
        try:
            self._connection.connection.drain_events(timeout=0)
        except TimeoutError:
            pass  # the frame is not all there yet
        except self._connection.connection_errors + self._connection.channel_errors:
            return False
        return True

    def _drop(self) -> None:
        self._channel = self._poller = None
        self._connection.collect()  # releases the socket without talking to a broker that may be gone


def encode_reply(content_type: str, result, exc_info) -> tuple[bytes, str, str, object, object]:
    """The reply's body, content type and encoding, in the request's own serialization, encoded once;
    with the result and exc_info the worker reports (an unencodable result becomes the error)."""
    serializer = kombu.serialization.registry.type_to_name[content_type]
    error = serialize(exc_info[1]) if exc_info is not None else None
    try:
        content_type, encoding, body = kombu.serialization.dumps({"result": result, "error": error}, serializer)
    except Exception as unencodable:
        exc_info = (type(unencodable), unencodable, unencodable.__traceback__)
        error = serialize(UnserializableValueError(result))
        result = None
        content_type, encoding, body = kombu.serialization.dumps({"result": None, "error": error}, serializer)
    return body, content_type, encoding, result, exc_info


class RpcConsumer(nameko_rpc.RpcConsumer):
    def setup(self):
        super().setup()
        config = self.container.config
        self.replies = ReplyConnection(
            config[AMQP_URI_CONFIG_KEY],
            self.container.service_name,
            ssl=config.get(AMQP_SSL_CONFIG_KEY),
            login_method=config.get(LOGIN_METHOD_CONFIG_KEY),
        )

    def stop(self):
        super().stop()
        self.replies.close()

    def kill(self):
        super().kill()
        self.replies.close()

    def handle_result(self, message, result, exc_info):
        properties = message.properties
        body, content_type, encoding, result, exc_info = encode_reply(properties["content_type"], result, exc_info)
        reply = amqp.Message(
            body,
            content_type=content_type,
            content_encoding=encoding,
            correlation_id=properties.get("correlation_id"),
            delivery_mode=NOT_PERSISTENT,
        )
        self.replies.publish(reply, self.queue.exchange.name, properties["reply_to"])
        self.queue_consumer.ack_message(message)
        return result, exc_info


class Rpc(nameko_rpc.Rpc):
    rpc_consumer = RpcConsumer()

    def setup(self):
        super().setup()
        # nameko inspects the method on every call (inspect.getcallargs); its signature is read once here.
        self.signature = inspect.signature(getattr(self.container.service_cls, self.method_name))

    def unpack_message_headers(self, message):
        context = super().unpack_message_headers(message)
        context.pop(BROKER_USER, None)
        if user := message.properties.get("user_id"):
            context[BROKER_USER] = user
        return context

    def check_signature(self, args, kwargs):
        try:
            call = self.signature.bind(None, *args, **kwargs)
        except TypeError as wrong:
            raise IncorrectSignature(str(wrong)) from None
        fields = [field for name, value in call.arguments.items() for field in unstorable_fields(value, name)]
        if fields:
            message = "must not contain NUL or lone surrogates"
            raise ServiceError("validation_error", message, [{"field": field, "message": message} for field in fields])


rpc = Rpc.decorator
