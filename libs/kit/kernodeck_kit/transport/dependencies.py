"""nameko dependency providers: the service's settings, its database and its metrics."""

import logging
import math
import time
from datetime import timedelta
from typing import TypeVar

from eventlet import Event as GreenEvent
from nameko.extensions import DependencyProvider

from kernodeck_contracts.errors import ServiceError
from kernodeck_kit import metrics
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import OutboxRelay, Store
from kernodeck_kit.settings import ServiceSettings
from kernodeck_kit.transport.publish import amqp_publisher
from kernodeck_kit.types import utcnow

log = logging.getLogger(__name__)

PRUNE_EVERY_S = 3600

S = TypeVar("S", bound=ServiceSettings)


def settings_of(container, settings_cls: type[S]) -> S:
    """The container's settings, validated once and kept on it: every extension that reads them shares one model."""
    settings = getattr(container, "kernodeck_settings", None)
    if settings is None:
        settings = container.kernodeck_settings = settings_cls.from_nameko_config(container.config)
    return settings


class Settings(DependencyProvider):
    """Gives workers the service's validated settings (`Settings(PaymentsSettings)`)."""

    def __init__(self, settings_cls: type[ServiceSettings]):
        self.settings_cls = settings_cls

    def setup(self):
        self.settings = settings_of(self.container, self.settings_cls)

    def get_dependency(self, worker_ctx):
        return self.settings


class Database(DependencyProvider):
    """Gives workers the service's `Store` and runs the outbox relay.

    Reads DATABASE_URL, AMQP_URI, OUTBOX_RELAY_INTERVAL_S, OUTBOX_RETENTION_DAYS and
    PROCESSED_EVENTS_RETENTION_DAYS (the relay prunes both hourly) from the nameko
    config that the runner (or a test) builds. Events leave under the service's
    name unless `source` names another (every chain watcher speaks as "chain").
    """

    def __init__(self, source: str | None = None):
        self.source = source

    def setup(self):
        config = self.container.config
        self.engine = make_engine(config["DATABASE_URL"])
        self.interval = float(config.get("OUTBOX_RELAY_INTERVAL_S", 2.0))
        self.retention = timedelta(days=float(config.get("OUTBOX_RETENTION_DAYS", 7)))
        self.processed_retention = timedelta(days=float(config.get("PROCESSED_EVENTS_RETENTION_DAYS", 30)))
        source = self.source or self.container.service_name
        self.publisher = amqp_publisher(config["AMQP_URI"])
        self.relay = OutboxRelay(self.engine, source, self.publisher)
        self.store = Store(self.engine, source, self.relay)
        self._stopped = GreenEvent()

    def start(self):
        self.container.spawn_managed_thread(self._relay_loop, identifier="outbox_relay")

    def stop(self):
        self._stopped.send(True)
        self.engine.dispose()
        self.publisher.close()

    def kill(self):
        self.stop()

    def get_dependency(self, worker_ctx):
        return self.store

    def _relay_loop(self):
        last_prune = -math.inf  # prune on the first pass: monotonic time starts near 0 at boot
        while not self._stopped.wait(self.interval):
            try:
                self.relay.publish_pending(older_than=timedelta(seconds=self.interval))
                if time.monotonic() - last_prune > PRUNE_EVERY_S:
                    self.relay.prune(sent_before=utcnow() - self.retention)
                    self.store.prune_processed(utcnow() - self.processed_retention)
                    last_prune = time.monotonic()
            except Exception:
                log.exception("outbox relay pass failed")


class Instrumented(DependencyProvider):
    """Times every entrypoint and counts its errors by code."""

    def setup(self):
        self._started: dict[int, float] = {}

    def worker_setup(self, worker_ctx):
        self._started[id(worker_ctx)] = time.perf_counter()

    def worker_result(self, worker_ctx, result=None, exc_info=None):
        started = self._started.pop(id(worker_ctx), None)
        service = self.container.service_name
        name = worker_ctx.entrypoint.method_name
        if started is not None:
            metrics.ENTRYPOINT_SECONDS.labels(service, name).observe(time.perf_counter() - started)
        if exc_info is not None:
            error = exc_info[1]
            code = error.code if isinstance(error, ServiceError) else "internal"
            metrics.ENTRYPOINT_ERRORS.labels(service, name, code).inc()
