"""The pure rules: a transfer's life, the common ancestor, lag and back-off."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.statuses import TransferStatus
from kernodeck_watchers.chains.base import BlockRef, SeenTransfer
from kernodeck_watchers.domain import transfers
from kernodeck_watchers.domain.progress import Limits, Progress, backoff_delay
from kernodeck_watchers.domain.reorg import common_ancestor
from kernodeck_watchers.domain.transfers import Kind
from kernodeck_watchers.domain.watched import WatchedAddresses

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, tzinfo=UTC)
SEEN = SeenTransfer("aa" * 32, 1, "addr", None, 378_000)


def block(height: int, time: datetime = T0, name: str = "b") -> BlockRef:
    return BlockRef(height, f"{name}{height}", f"{name}{height - 1}", int(time.timestamp()))


def test_a_first_sighting_in_a_block_is_seen_with_its_confirmations():
    tracked, kind = transfers.in_block(None, SEEN, block(100), tip_height=102, required=6)
    assert kind == Kind.SEEN
    assert (tracked.state, tracked.confirmations, tracked.required) == (TransferStatus.CONFIRMING, 3, 6)
    assert (tracked.block_height, tracked.block_hash, tracked.occurred_at) == (100, "b100", T0)


def test_the_same_block_again_says_nothing():
    tracked, _ = transfers.in_block(None, SEEN, block(100), 100, 2)
    assert transfers.in_block(tracked, SEEN, block(100), 105, 2) == (tracked, None)


def test_a_mempool_transfer_mined_keeps_its_first_sighting_and_waits_for_the_count():
    pending, kind = transfers.in_mempool(None, SEEN, T0 + timedelta(minutes=5), required=2)
    assert (kind, pending.state, pending.block_height, pending.confirmations) == (
        Kind.SEEN,
        TransferStatus.SEEN,
        None,
        0,
    )
    later, kind = transfers.in_block(pending, SEEN, block(100, T0 + timedelta(minutes=9)), 100, 6)
    assert kind is None
    assert (later.state, later.block_height, later.occurred_at, later.required) == (
        TransferStatus.CONFIRMING,
        100,
        T0 + timedelta(minutes=5),
        2,
    )
    counted, kind = transfers.count(later, 100)
    assert (kind, counted.confirmations) == (Kind.CONFIRMATIONS, 1)


def test_a_block_older_than_the_mempool_sighting_sets_when_it_happened():
    pending, _ = transfers.in_mempool(None, SEEN, T0 + timedelta(minutes=5), 2)
    mined, _ = transfers.in_block(pending, SEEN, block(100, T0), 100, 2)
    assert mined.occurred_at == T0


def test_a_reverted_transfer_found_again_is_seen_again_keeping_its_first_time():
    tracked, _ = transfers.in_block(None, SEEN, block(100, T0), 100, 2)
    gone, kind = transfers.reverted(tracked)
    assert (kind, gone.state, gone.confirmations, gone.block_hash) == (
        Kind.REVERTED,
        TransferStatus.REVERTED,
        0,
        "b100",
    )
    back, kind = transfers.in_block(gone, SEEN, block(101, T0 + timedelta(minutes=20), "c"), 101, 6)
    assert (kind, back.state, back.block_hash, back.occurred_at, back.required) == (
        Kind.SEEN,
        TransferStatus.CONFIRMING,
        "c101",
        T0,
        2,
    )
    again, kind = transfers.in_mempool(gone, SEEN, T0 + timedelta(hours=1), 2)
    assert (kind, again.state, again.block_hash, again.occurred_at) == (Kind.SEEN, TransferStatus.SEEN, None, T0)


def test_a_live_transfer_in_the_mempool_listing_again_says_nothing():
    pending, _ = transfers.in_mempool(None, SEEN, T0, 2)
    assert transfers.in_mempool(pending, SEEN, T0 + timedelta(minutes=1), 2) == (pending, None)


def test_confirmations_are_announced_when_they_change_and_confirmed_once_at_the_requirement():
    tracked, _ = transfers.in_block(None, SEEN, block(100), 100, 3)
    assert transfers.count(tracked, 100) == (tracked, None)
    tracked, kind = transfers.count(tracked, 101)
    assert (kind, tracked.confirmations, tracked.state) == (Kind.CONFIRMATIONS, 2, TransferStatus.CONFIRMING)
    tracked, kind = transfers.count(tracked, 102)
    assert (kind, tracked.confirmations, tracked.state) == (Kind.CONFIRMED, 3, TransferStatus.CONFIRMED)
    assert transfers.count(tracked, 110) == (tracked, None)


def test_a_transfer_found_deep_enough_is_confirmed_at_the_first_count():
    tracked, kind = transfers.in_block(None, SEEN, block(100), tip_height=109, required=6)
    assert (kind, tracked.confirmations) == (Kind.SEEN, 10)
    confirmed, kind = transfers.count(tracked, 109)
    assert (kind, confirmed.state, confirmed.confirmations) == (Kind.CONFIRMED, TransferStatus.CONFIRMED, 10)


def test_the_common_ancestor_is_the_newest_remembered_block_on_the_best_chain():
    scanned = [(105, "x105"), (104, "x104"), (103, "b103"), (102, "b102")]
    best = {102: "b102", 103: "b103", 104: "b104"}
    looked = []

    def best_hash(height):
        looked.append(height)
        return best.get(height)

    assert common_ancestor(scanned, best_hash) == (103, "b103")
    assert looked == [105, 104, 103]  # stops at the first match, newest first


def test_no_common_ancestor_among_the_remembered_blocks():
    assert common_ancestor([(3, "x3"), (2, "x2")], lambda height: f"b{height}") is None


LIMITS = Limits(blocks=2, seconds=60, block_seconds=10)


def test_lag_is_zero_when_caught_up_and_grows_from_the_last_catch_up():
    progress = Progress(since=T0)
    progress.node_answered(100)
    progress.scanned(100, T0 + timedelta(seconds=10))
    caught_up = progress.lag(T0 + timedelta(seconds=12), LIMITS)
    assert (caught_up.blocks, caught_up.seconds, caught_up.lagging) == (0, 0, False)
    progress.node_answered(103)
    behind = progress.lag(T0 + timedelta(seconds=40), LIMITS)
    assert (behind.node_height, behind.scanned_height, behind.blocks, behind.seconds) == (103, 100, 3, 30)
    assert behind.lagging  # 3 blocks > 2
    progress.node_answered(102)
    assert not progress.lag(T0 + timedelta(seconds=40), LIMITS).lagging  # 2 blocks: the limit itself


def test_lag_in_seconds_alone_makes_it_lagging():
    progress = Progress(since=T0)
    progress.node_answered(101)
    progress.scanned(100, T0)
    assert not progress.lag(T0 + timedelta(seconds=60), LIMITS).lagging
    assert progress.lag(T0 + timedelta(seconds=61), LIMITS).lagging


def test_a_silent_node_is_lagging_only_once_the_limits_are_exceeded():
    progress = Progress(since=T0)
    progress.node_answered(100)
    progress.scanned(100, T0)
    progress.node_failed(T0 + timedelta(seconds=1))
    progress.node_failed(T0 + timedelta(seconds=15))  # still silent: counted from the first failure
    # one failed answer, or a few: not an outage
    lag = progress.lag(T0 + timedelta(seconds=30), LIMITS)
    assert (lag.node_height, lag.scanned_height, lag.blocks, lag.seconds, lag.lagging) == (100, 100, 2, 30, False)
    # the blocks it has likely made while silent (one per 10 s) pass the limit of 2
    assert progress.lag(T0 + timedelta(seconds=31), LIMITS).lagging
    # or the seconds do, whatever the block time
    slow = Limits(blocks=2, seconds=60, block_seconds=600)
    assert not progress.lag(T0 + timedelta(seconds=60), slow).lagging
    assert progress.lag(T0 + timedelta(seconds=61), slow).lagging
    progress.node_answered(101)  # it answers again: silence forgotten
    assert not progress.lag(T0 + timedelta(seconds=40), LIMITS).lagging


def test_a_node_that_never_answered_is_lagging_at_once():
    progress = Progress(since=T0)
    progress.node_failed(T0)
    assert progress.lag(T0, LIMITS).lagging


def test_backoff_doubles_up_to_the_cap():
    assert [backoff_delay(n, 0.5, 6) for n in range(1, 7)] == [0.5, 1, 2, 4, 6, 6]
    assert backoff_delay(10_000, 1, 60) == 60


def test_the_watched_set_keeps_only_the_exceptions_to_the_default_confirmations():
    watched = WatchedAddresses(default_required=2)
    watched.add("a", 2)
    watched.add("b", 6)
    assert watched.addresses == {"a", "b"}
    assert (watched.required("a"), watched.required("b"), watched.required("c")) == (2, 6, 2)
    assert watched._required == {"b": 6}
    watched.add("b", 2)
    watched.discard("a")
    assert (len(watched), watched._required, watched.required("b")) == (1, {}, 2)
