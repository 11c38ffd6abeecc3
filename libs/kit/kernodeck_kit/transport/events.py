"""Event handlers that never drop an event, never spin on one that fails, and set aside one that always fails."""

import logging
from functools import partial

import eventlet
from kombu import Exchange, Queue, binding
from nameko.amqp.publish import DEFAULT_TRANSPORT_OPTIONS, get_connection
from nameko.constants import AMQP_URI_CONFIG_KEY
from nameko.events import EventHandler
from nameko.exceptions import ContainerBeingKilled
from nameko.messaging import QueueConsumer
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from kernodeck_contracts.errors import EventTooEarly
from kernodeck_contracts.events import Event
from kernodeck_kit import metrics
from kernodeck_kit.dead_letters import DELIVERIES, ERROR, ERROR_CHARS, QUEUE, dead_letter_queue, origin, republish
from kernodeck_kit.settings import SETTINGS_KEY, ServiceSettings, amqp_ssl

RETRY_PAUSE_KEY = "EVENT_RETRY_PAUSE_S"
DEFAULT_RETRY_PAUSE_S = 1.0
DEFAULT_MAX_DELIVERIES = ServiceSettings.model_fields["event_max_deliveries"].default
# Unacknowledged events a batching handler may hold: a busy block's, whatever the container's max_workers (one
# worker handles a whole batch).
BATCH_PREFETCH = 1000

log = logging.getLogger(__name__)


def retry_exchange(service: str) -> str:
    return f"{service}.retry"


def transient(error: BaseException) -> bool:
    """A failure of what the handler depends on (the database away, a lost connection, a conflict to retry, an
    event it needs not there yet), not of the event: never counted against it."""
    if isinstance(error, DBAPIError) and error.connection_invalidated:
        return True
    return isinstance(error, OperationalError | InterfaceError | ConnectionError | TimeoutError | EventTooEarly)


class RequeueingEventHandler(EventHandler):
    """nameko's event handler with `requeue_on_error`, pausing before each retry, and a bound on retries.

    nameko acknowledges a message whose handler raised, which would lose it;
    here it is tried again (handlers are idempotent, so a retry after a
    partial failure is safe). The worker waits before each retry, so a
    failing dependency slows consumption rather than burning the CPU. A
    transient failure (the database away) puts the message back as it was,
    for as long as it lasts; any other failure sends it back to the end of
    its queue with its delivery count raised, and at `event_max_deliveries`
    (the service's setting) sets it aside in `<service>.dead-letters`,
    counted in `kernodeck_events_dead_lettered_total`.

    An event sent back goes through the service's own direct exchange `<service>.retry`, to which each of its
    queues is bound by its name, not the broker's default exchange: a service may then publish only to its
    own exchanges (least privilege on the bus: a user allowed the default exchange could put anything in
    any queue).
    """

    def setup(self):
        super().setup()
        queue = self.queue
        retry = Exchange(retry_exchange(self.container.service_name), type="direct", durable=True)
        self.queue = Queue(
            queue.name,
            bindings=[binding(queue.exchange, routing_key=queue.routing_key), binding(retry, routing_key=queue.name)],
            durable=True,
            auto_delete=queue.auto_delete,
            exclusive=queue.exclusive,
        )
        config = self.container.config
        self.retry_pause_s = float(config.get(RETRY_PAUSE_KEY, DEFAULT_RETRY_PAUSE_S))
        self.max_deliveries = int(config.get(SETTINGS_KEY, {}).get("event_max_deliveries", DEFAULT_MAX_DELIVERIES))
        self.transport_options = {**DEFAULT_TRANSPORT_OPTIONS, "confirm_publish": True}

    def handle_result(self, message, worker_ctx, result=None, exc_info=None):
        labels = (self.container.service_name, self.method_name)
        if message.delivery_info.get("redelivered") or int((message.headers or {}).get(DELIVERIES, 1)) > 1:
            metrics.EVENTS_REDELIVERED.labels(*labels).inc()  # put back by the broker, or sent back after a failure
        if exc_info is not None:
            metrics.HANDLER_FAILURES.labels(*labels).inc()
            eventlet.sleep(self.retry_pause_s)
            if not transient(exc_info[1]):
                try:
                    self._count_failure(message, exc_info[1])
                except Exception:
                    log.exception("a failed event could not be passed on: it is put back as it was")
                else:
                    self.queue_consumer.ack_message(message)
                    return result, exc_info
        return super().handle_result(message, worker_ctx, result, exc_info)

    def _count_failure(self, message, error: BaseException) -> None:
        deliveries = int((message.headers or {}).get(DELIVERIES, 1))
        where = {**origin(message), QUEUE: self.queue.name}
        service = self.container.service_name
        amqp_uri = self.container.config[AMQP_URI_CONFIG_KEY]
        with get_connection(amqp_uri, ssl=amqp_ssl(amqp_uri), transport_options=self.transport_options) as connection:
            channel = connection.default_channel
            if deliveries < self.max_deliveries:
                republish(
                    channel,
                    message,
                    self.queue.name,
                    exchange=retry_exchange(service),
                    **where,
                    **{DELIVERIES: deliveries + 1},
                )
                return
            dead_letters = dead_letter_queue(service)(channel)
            dead_letters.declare()
            failure = f"{type(error).__name__}: {error}"[:ERROR_CHARS]
            republish(
                channel, message, "", exchange=dead_letters.name, **where, **{DELIVERIES: deliveries, ERROR: failure}
            )
        metrics.EVENTS_DEAD_LETTERED.labels(service).inc()
        log.error(
            "an event kept failing: set aside",
            extra={
                "queue": dead_letters.name,
                "deliveries": deliveries,
                "routing_key": where.get("x-kernodeck-routing-key"),
            },
        )


class BatchQueueConsumer(QueueConsumer):
    """nameko's queue consumer (a connection of its own) for batching handlers: up to BATCH_PREFETCH events each,
    each handed to its handler from the consumer's green thread. nameko's gives every message a green thread of
    its own, so that a handler that blocks cannot hold up the consumer; a batching handler only queues the event.
    What it buys: bench/bench_transport.py ("batches handed over")."""

    @property
    def prefetch_count(self):
        return BATCH_PREFETCH

    def handle_message(self, provider, body, message):
        provider.handle_message(body, message)


class BatchingEventHandler(RequeueingEventHandler):
    """The handler gets a list of payloads: the events that arrived while its previous call ran, in their order
    of arrival; one call at a time. A batch that fails is broken up: each of its events goes to the handler
    again alone (a list of one), with the retries and the set-aside of `consumer`. The batch is bounded by the
    prefetch of its consumer (BATCH_PREFETCH)."""

    queue_consumer = BatchQueueConsumer()

    def setup(self):
        super().setup()
        self._waiting: list[tuple[object, object]] = []  # (payload, message), not yet handed to a worker
        self._alone: list[tuple[object, object]] = []  # of a batch that failed, each to handle by itself
        self._busy = False

    def handle_message(self, body, message):
        self._waiting.append((body, message))
        self._next()

    def _next(self) -> None:
        if self._busy or not (self._alone or self._waiting):
            return
        self._busy = True
        # Started on the hub's next turn, once the consumer has taken in what the broker sent with this event:
        # a block's events that arrive together are one batch, not a first one alone and then the rest.
        self.container.spawn_managed_thread(self._start, identifier=f"{self.method_name}_batch")

    def _start(self) -> None:
        if self._alone:
            batch = [self._alone.pop(0)]
        else:
            batch, self._waiting = self._waiting, []
        try:
            self.container.spawn_worker(
                self,
                ([body for body, _ in batch],),
                {},
                context_data=self.unpack_message_headers(batch[0][1]),
                handle_result=partial(self._handled, batch),
            )
        except ContainerBeingKilled:
            self._busy = False
            for _, message in batch:
                self.queue_consumer.requeue_message(message)

    def _handled(self, batch, worker_ctx, result=None, exc_info=None):
        try:
            if exc_info is not None and len(batch) > 1:
                log.warning("a batch of events failed: each goes again alone", extra={"events": len(batch)})
                self._alone.extend(batch)
            else:
                for _, message in batch:
                    super().handle_result(message, worker_ctx, result, exc_info)
        finally:
            self._busy = False
            self._next()
        return result, exc_info


def consumer(event: type[Event]):
    """Handle the events of class `event`: retried after a pause when the handler fails, set aside after too
    many. What it applied is recorded under the class's key (`kernodeck_kit.outbox.consumer_key`)."""
    return RequeueingEventHandler.decorator(event.source, event.type, requeue_on_error=True)


def batch_consumer(event: type[Event]):
    """As `consumer`, the handler taking a list of the payloads that arrived while it was busy (see
    BatchingEventHandler): one transaction for many events where the use case allows it."""
    return BatchingEventHandler.decorator(event.source, event.type, requeue_on_error=True)
