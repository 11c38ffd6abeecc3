"""What provisioning reports from its tables at each scrape: GPUs per model, free, held, rented, out of service."""

from collections import Counter
from collections.abc import Iterator
from datetime import datetime

from prometheus_client.core import GaugeMetricFamily
from sqlalchemy import func, select
from sqlmodel import Session

from kernodeck_provisioning.domain import NodeState, RentalStatus
from kernodeck_provisioning.store import GpuClaimRow, ModelRow, NodeRow, RentalRow

RENTED = (RentalStatus.DELIVERING.value, RentalStatus.READY.value)


def read_state(session: Session, _now: datetime, _settings) -> Iterator[GaugeMetricFamily]:
    gpus: Counter[tuple[str, str]] = Counter()
    claimed = dict(session.execute(select(GpuClaimRow.node_id, func.count()).group_by(GpuClaimRow.node_id)).all())
    for node in session.execute(select(NodeRow)).scalars():
        if node.state == NodeState.AVAILABLE.value:
            gpus[(node.model_id, "free")] += node.gpu_count - claimed.get(node.id, 0)
        elif node.state != NodeState.RETIRED.value:
            gpus[(node.model_id, "out_of_service")] += node.gpu_count - claimed.get(node.id, 0)
    rentals = select(RentalRow.model_id, RentalRow.status, func.sum(RentalRow.gpus)).group_by(
        RentalRow.model_id, RentalRow.status
    )
    for model, status, count in session.execute(rentals):
        if status == RentalStatus.HELD.value:
            gpus[(model, "held")] += count
        elif status in RENTED:
            gpus[(model, "rented")] += count
    family = GaugeMetricFamily(
        "kernodeck_gpus",
        "GPUs per model: free, held (awaiting payment), rented, out of service",
        labels=["model", "state"],
    )
    for model in session.execute(select(ModelRow.id)).scalars():
        for state in ("free", "held", "rented", "out_of_service"):
            family.add_metric([model, state], gpus[(model, state)])
    yield family
