"""What support reports from its tables at each scrape: requests by kind and status, the age of the oldest
open one (how long a customer has waited), extensions by status."""

from collections.abc import Iterator
from datetime import datetime

from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import func, select
from sqlmodel import Session

from kernodeck_support.domain import KINDS, ExtensionStatus, RequestStatus
from kernodeck_support.store import ExtensionRow, RequestRow


def read_state(session: Session, now: datetime, _settings) -> Iterator[GaugeMetricFamily]:
    counts = {
        (kind, status): n
        for kind, status, n in session.execute(
            select(RequestRow.kind, RequestRow.status, func.count()).group_by(RequestRow.kind, RequestRow.status)
        ).all()
    }
    requests = GaugeMetricFamily(
        "kernodeck_support_requests", "Support requests by kind and status", labels=["kind", "status"]
    )
    for kind in KINDS:
        for status in RequestStatus:
            requests.add_metric([kind, status.value], counts.get((kind, status.value), 0))
    yield requests
    oldest = session.execute(
        select(RequestRow.created_at)
        .where(RequestRow.status == RequestStatus.OPEN.value)
        .order_by(RequestRow.created_at)
        .limit(1)
    ).scalar()
    waiting = GaugeMetricFamily(
        "kernodeck_support_oldest_open_age_seconds", "How long the oldest open request has waited (0: none open)"
    )
    waiting.add_metric([], (now - oldest).total_seconds() if oldest is not None else 0)
    yield waiting
    by_status = dict(session.execute(select(ExtensionRow.status, func.count()).group_by(ExtensionRow.status)).all())
    extensions = GaugeMetricFamily("kernodeck_support_extensions", "Confirmed extensions by status", labels=["status"])
    for status in ExtensionStatus:
        extensions.add_metric([status.value], by_status.get(status.value, 0))
    yield extensions
