"""The journal: a transaction's transfers written together as it ends, read back as recorded before that."""

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from kernodeck_contracts.statuses import TransferStatus
from kernodeck_watchers.domain.transfers import Kind, Tracked
from kernodeck_watchers.journal import journal

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
SEEN = Tracked("tx1", 0, "bcrt1qalice", None, 5_000, TransferStatus.SEEN, 0, 2, T0)
MINED = replace(SEEN, state=TransferStatus.CONFIRMING, confirmations=1, block_height=10, block_hash="h10")
OTHER = replace(SEEN, txid="tx2", amount=7_000)


def stored(units, txid: str) -> Tracked | None:
    with units.transaction() as unit:
        return unit.tracked_among({(txid, 0)}).get((txid, 0))


def test_a_journal_reads_back_what_it_recorded_and_writes_the_last_of_each_transfer_as_it_ends(units):
    with journal(units, "bitcoin", T0) as entry:
        entry.record(SEEN, Kind.SEEN)
        assert entry.known("tx1", 0) == SEEN
        entry.record(MINED, Kind.CONFIRMATIONS)
        entry.record(OTHER, Kind.SEEN)
        assert entry.known("tx1", 0) == MINED
    assert (stored(units, "tx1"), stored(units, "tx2")) == (MINED, OTHER)
    confirmed = replace(MINED, state=TransferStatus.CONFIRMED, confirmations=2)
    with journal(units, "bitcoin", T0) as entry:  # known transfers, changed
        assert entry.known("tx1", 0) == MINED
        entry.record(confirmed, Kind.CONFIRMED)
    assert (stored(units, "tx1"), stored(units, "tx2")) == (confirmed, OTHER)


def test_a_journal_that_fails_writes_nothing(units):
    with pytest.raises(RuntimeError), journal(units, "bitcoin", T0) as entry:
        entry.record(SEEN, Kind.SEEN)
        raise RuntimeError("the node went away")
    assert stored(units, "tx1") is None


def test_transfers_read_ahead_are_known_as_stored_and_what_the_journal_records_comes_first(units):
    with journal(units, "bitcoin", T0) as entry:
        entry.record(MINED, Kind.CONFIRMATIONS)
    with journal(units, "bitcoin", T0) as entry:
        entry.load({("tx1", 0), ("tx2", 0)})
        assert (entry.known("tx1", 0), entry.known("tx2", 0)) == (MINED, None)
        entry.record(OTHER, Kind.SEEN)
        assert entry.known("tx2", 0) == OTHER
        assert entry.known("tx1", 1) is None  # not read ahead: read when asked
