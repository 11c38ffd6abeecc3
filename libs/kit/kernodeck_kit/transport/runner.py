"""Start one nameko service: logs, migrations, metrics, then the container."""

import gc
import logging
import signal
from collections.abc import Callable

import eventlet
import eventlet.event
from nameko.runners import ServiceRunner

from kernodeck_kit import logs, metrics, migrations
from kernodeck_kit.settings import ServiceSettings

log = logging.getLogger(__name__)


def nameko_config(settings: ServiceSettings) -> dict:
    return {
        **settings.nameko_config(),
        "DATABASE_URL": settings.resolved_database_url(),
        "OUTBOX_RELAY_INTERVAL_S": settings.outbox_relay_interval_s,
        "OUTBOX_RETENTION_DAYS": settings.outbox_retention_days,
        "PROCESSED_EVENTS_RETENTION_DAYS": settings.processed_events_retention_days,
    }


def run(service_cls, settings: ServiceSettings, package: str, prepare: Callable[[str], None] | None = None) -> None:
    """Run `service_cls` until SIGTERM or Ctrl-C. `kernodeck_kit.green.patch()` must come first.

    `prepare(database_url)` runs after the migrations, before the first message.
    """
    logs.configure(settings.service_name, settings.log_level)
    config = nameko_config(settings)
    migrations.upgrade(package, config["DATABASE_URL"])
    if prepare is not None:
        prepare(config["DATABASE_URL"])
    started = eventlet.event.Event()
    stopping = []
    metrics.serve(settings.metrics_port, settings.metrics_host, ready=lambda: started.ready() and not stopping)
    runner = ServiceRunner(config)
    runner.add_service(service_cls)

    def shutdown(_signum, _frame):
        stopping.append(True)  # /readyz answers 503 from here: the pod leaves its Service before it stops
        eventlet.spawn_n(runner.stop)

    signal.signal(signal.SIGTERM, shutdown)
    runner.start()
    # What starting made (modules, classes, the container: most of the process's objects, kept for its life)
    # leaves the collector's sight, so that a full collection does not walk it all again.
    gc.freeze()
    started.send(True)
    log.info("service started", extra={"metrics_port": settings.metrics_port})
    try:
        runner.wait()
    except KeyboardInterrupt:
        runner.stop()
