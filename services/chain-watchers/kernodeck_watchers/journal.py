"""Transfer changes saved with their events in one unit of work, each event with the network's epoch and next
sequence."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from kernodeck_contracts.events import (
    ChainTransfer,
    TransferConfirmations,
    TransferConfirmed,
    TransferReverted,
    TransferSeen,
)
from kernodeck_kit.units import Units
from kernodeck_watchers import metrics
from kernodeck_watchers.domain.transfers import Kind, Tracked
from kernodeck_watchers.unit import WatcherUnit

EVENTS: dict[Kind, type[ChainTransfer]] = {
    Kind.SEEN: TransferSeen,
    Kind.CONFIRMATIONS: TransferConfirmations,
    Kind.CONFIRMED: TransferConfirmed,
    Kind.REVERTED: TransferReverted,
}


def transfer_event(network: str, tracked: Tracked, kind: Kind, epoch: int, sequence: int) -> ChainTransfer:
    return EVENTS[kind](
        network=network,
        txid=tracked.txid,
        index=tracked.index,
        address=tracked.address,
        token=tracked.token,
        amount=tracked.amount,
        block_height=tracked.block_height,
        block_hash=tracked.block_hash,
        confirmations=tracked.confirmations,
        sequence=sequence,
        epoch=epoch,
        occurred_at=tracked.occurred_at,
    )


class Journal:
    def __init__(self, unit: WatcherUnit, network: str, epoch: int, sequence: int, now: datetime):
        self.unit = unit
        self.network = network
        self.epoch = epoch
        self.sequence = sequence
        self.now = now
        self.kinds: list[Kind] = []
        self.saved: dict[tuple[str, int], Tracked] = {}  # written together as the journal ends
        self.stored: dict[tuple[str, int], Tracked | None] = {}  # read ahead by `load`, None: not stored

    def load(self, keys: set[tuple[str, int]]) -> None:
        """Reads the stored transfers of these (txid, index) keys at once, for `known`: a busy block's hundreds
        of transfers in one query instead of one each. What is stored cannot change meanwhile: every journal
        of the network holds its sequence's lock."""
        self.stored.update(dict.fromkeys(keys))
        self.stored.update(self.unit.tracked_among(keys))

    def known(self, txid: str, index: int) -> Tracked | None:
        """The transfer as this journal recorded it, else as stored (read now, unless `load` read it ahead)."""
        key = (txid, index)
        if key in self.saved:
            return self.saved[key]
        if key not in self.stored:
            self.load({key})
        return self.stored[key]

    def record(self, tracked: Tracked, kind: Kind | None) -> None:
        """Save the transfer as it is now and, when `kind` says something happened, announce it."""
        self.saved[(tracked.txid, tracked.index)] = tracked
        if kind is not None:
            self.sequence += 1
            self.unit.emit(transfer_event(self.network, tracked, kind, self.epoch, self.sequence))
            self.kinds.append(kind)


@contextmanager
def journal(units: Units[WatcherUnit], network: str, now: datetime) -> Iterator[Journal]:
    """One transaction of the network's watcher; emitting transactions of every replica take turns."""
    with units.transaction() as unit:
        entry = Journal(unit, network, *unit.lock_sequence(), now)
        yield entry
        unit.save_tracked(list(entry.saved.values()), now)
        unit.save_sequence(entry.sequence)
    for kind in entry.kinds:
        metrics.TRANSFERS.labels(network, kind.value.removeprefix("transfer_")).inc()
