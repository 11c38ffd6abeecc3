"""What orders reports from its tables at each scrape: orders by status."""

from collections.abc import Iterator
from datetime import datetime

from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import func, select
from sqlmodel import Session

from kernodeck_orders.domain import OrderStatus
from kernodeck_orders.store import OrderRow


def read_state(session: Session, _now: datetime, _settings) -> Iterator[GaugeMetricFamily]:
    counts = dict(session.execute(select(OrderRow.status, func.count()).group_by(OrderRow.status)).all())
    family = GaugeMetricFamily("kernodeck_orders", "Orders by status", labels=["status"])
    for status in OrderStatus:
        family.add_metric([status.value], counts.get(status.value, 0))
    yield family
