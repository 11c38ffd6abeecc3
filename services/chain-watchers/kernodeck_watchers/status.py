"""The active watcher's WatcherStatus, and the lag metrics that go with it."""

from datetime import datetime

from kernodeck_contracts.events import WatcherStatus
from kernodeck_kit.units import Units
from kernodeck_watchers import metrics
from kernodeck_watchers.domain.progress import Limits, Progress
from kernodeck_watchers.unit import WatcherUnit

UNSEEN_KINDS = ("internal_eth", "internal_trx")


def publish_status(
    units: Units[WatcherUnit], network: str, progress: Progress, limits: Limits, unseen: frozenset[str], now: datetime
) -> WatcherStatus:
    lag = progress.lag(now, limits)
    for kind in UNSEEN_KINDS:
        metrics.UNSEEN.labels(network, kind).set(int(kind in unseen))
    metrics.NODE_HEIGHT.labels(network).set(lag.node_height)
    metrics.SCANNED_HEIGHT.labels(network).set(lag.scanned_height)
    metrics.LAG_BLOCKS.labels(network).set(lag.blocks)
    metrics.LAG_SECONDS.labels(network).set(lag.seconds)
    metrics.LAGGING.labels(network).set(int(lag.lagging))
    event = WatcherStatus(
        network=network,
        node_height=lag.node_height,
        scanned_height=lag.scanned_height,
        lag_seconds=lag.seconds,
        lagging=lag.lagging,
        unseen=sorted(unseen),
        occurred_at=now,
    )
    with units.transaction() as unit:
        unit.emit(event)
    return event
