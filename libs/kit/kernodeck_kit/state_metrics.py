"""Gauges read from a service's own tables when Prometheus scrapes: orders by status, queue sizes, pools.

A service names what it reports with `StateMetrics(read, SettingsClass)`, `read(session, now,
settings)` yielding `GaugeMetricFamily`s (settings is None without a settings class). Every replica reports the same numbers (they share the database): dashboards
and alerts take `max` over the instances. A scrape that cannot reach the database reports
`kernodeck_state_metrics_up 0` instead of failing the whole endpoint.
"""

import logging
from collections.abc import Callable, Iterable
from datetime import datetime

from nameko.extensions import DependencyProvider
from prometheus_client.core import REGISTRY, GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlmodel import Session

from kernodeck_kit.db import make_engine
from kernodeck_kit.settings import ServiceSettings
from kernodeck_kit.transport.dependencies import settings_of
from kernodeck_kit.types import utcnow

log = logging.getLogger(__name__)

Reader = Callable[[Session, datetime, ServiceSettings | None], Iterable[GaugeMetricFamily]]


class _StateCollector(Collector):
    """One per process: each running service's reader, by service name."""

    def __init__(self):
        self.readers: dict[str, Callable[[], Iterable[GaugeMetricFamily]]] = {}

    def collect(self):
        up = GaugeMetricFamily(
            "kernodeck_state_metrics_up", "1 when the service's tables could be read", labels=["service"]
        )
        for service, read in list(self.readers.items()):
            try:
                families = list(read())
            except Exception:
                log.warning("state metrics could not be read", extra={"service": service}, exc_info=True)
                up.add_metric([service], 0)
                continue
            up.add_metric([service], 1)
            yield from families
        yield up


COLLECTOR = _StateCollector()
REGISTRY.register(COLLECTOR)


class StateMetrics(DependencyProvider):
    """Reports `read(session, now, settings)` on the service's metrics endpoint, from its database."""

    def __init__(self, read: Reader, settings_cls: type[ServiceSettings] | None = None):
        self.read = read
        self.settings_cls = settings_cls

    def setup(self):
        self.settings = settings_of(self.container, self.settings_cls) if self.settings_cls else None
        self.engine = make_engine(self.container.config["DATABASE_URL"], pool_size=1)
        COLLECTOR.readers[self.container.service_name] = self._families

    def _families(self) -> list[GaugeMetricFamily]:
        with Session(self.engine) as session:
            return list(self.read(session, utcnow(), self.settings))

    def stop(self):
        if COLLECTOR.readers.get(self.container.service_name) == self._families:
            del COLLECTOR.readers[self.container.service_name]
        self.engine.dispose()

    def kill(self):
        self.stop()
