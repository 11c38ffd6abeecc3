"""A scan pass over an in-memory node: blocks in order, confirmations, the mempool, sequence numbers."""

from datetime import UTC, datetime

import pytest

from kernodeck_watchers.chains.base import BlockNotYet, NodeError

from ..memory import MemoryWatcher

pytestmark = pytest.mark.unit

ALICE, BOB, STRANGER = "alice", "bob", "stranger"


@pytest.fixture(autouse=True)
def watching(watched):
    watched.add(ALICE, 3)
    watched.add(BOB, 1)


def test_the_first_pass_starts_after_the_tip_and_then_scans_every_new_block(make_scanner, chain, units, events, pay):
    scanner = make_scanner()
    scanner.run()
    with units.transaction() as unit:
        assert unit.get_cursor().height == chain.height == 100
    paid = chain.mine(pay(ALICE, 5_000))
    scanner.run()
    assert events.kinds() == [("transfer_seen", chain.best[-1].transfers[0].txid, 1)]
    with units.transaction() as unit:
        assert unit.get_cursor().hash == paid.hash


def test_the_scan_reads_its_delay_behind_the_tip(make_scanner, chain, units, events, pay):
    scanner = make_scanner(tip_delay=2)
    scanner.run()
    paid = pay(ALICE, 5_000)
    chain.mine(paid)
    chain.mine_empty()
    scanner.run()
    assert events.kinds() == []  # two below the tip: not read yet
    chain.mine_empty()
    scanner.run()
    assert events.kinds() == [("transfer_seen", paid.txid, 1)]
    with units.transaction() as unit:
        assert unit.get_cursor().height == chain.height - 2


def test_a_block_not_there_yet_at_the_tip_ends_the_pass_quietly(make_scanner, chain, units, events, pay, monkeypatch):
    scanner = make_scanner()
    scanner.run()
    paid = pay(ALICE, 5_000)
    chain.mine(paid)
    chain.mine_empty()
    answered = chain.block

    def racing(height):  # the backend that answers blocks lacks the tip the other one gave
        if height == chain.height:
            raise BlockNotYet(f"no block at height {height}")
        return answered(height)

    monkeypatch.setattr(chain, "block", racing)
    scanner.run()
    assert events.kinds() == [("transfer_seen", paid.txid, 2)]  # counted against the tip the node gave
    assert scanner.progress.reachable
    monkeypatch.setattr(chain, "block", answered)
    scanner.run()
    assert events.kinds() == []  # never fewer than told
    chain.mine_empty()
    scanner.run()
    assert events.kinds() == [("transfer_confirmed", paid.txid, 3)]


def test_a_configured_start_height_scans_from_that_block(make_scanner, chain, events, pay):
    early = pay(ALICE, 7)
    chain.mine(early)
    chain.mine_empty(3)
    make_scanner(start_height=chain.height - 3).run()
    assert events.kinds() == [("transfer_seen", early.txid, 4), ("transfer_confirmed", early.txid, 4)]


def test_confirmations_are_counted_block_by_block_until_confirmed(make_scanner, chain, events, pay):
    scanner = make_scanner()
    scanner.run()
    payment = pay(ALICE, 5_000)
    chain.mine(payment)
    scanner.run()
    chain.mine_empty()
    scanner.run()
    chain.mine_empty()
    scanner.run()
    chain.mine_empty(2)
    scanner.run()
    assert events.kinds() == [
        ("transfer_seen", payment.txid, 1),
        ("transfer_confirmations", payment.txid, 2),
        ("transfer_confirmed", payment.txid, 3),
    ]


def test_each_address_needs_its_own_confirmations(make_scanner, chain, events, pay):
    scanner = make_scanner()
    scanner.run()
    to_alice, to_bob, to_stranger = pay(ALICE, 1), pay(BOB, 2), pay(STRANGER, 3)
    chain.mine(to_alice, to_bob, to_stranger)
    scanner.run()
    assert events.kinds() == [
        ("transfer_seen", to_alice.txid, 1),
        ("transfer_seen", to_bob.txid, 1),
        ("transfer_confirmed", to_bob.txid, 1),
    ]


def test_after_downtime_every_missed_block_is_scanned_in_one_pass(make_scanner, chain, units, events, pay):
    make_scanner().run()
    start = chain.height
    first, second = pay(ALICE, 1), pay(ALICE, 2)
    chain.mine_empty()
    chain.mine(first)
    chain.mine_empty(4)
    chain.mine(second)
    make_scanner().run()  # a new scanner: the watcher restarted
    assert events.kinds() == [
        ("transfer_seen", first.txid, 6),
        ("transfer_seen", second.txid, 1),
        ("transfer_confirmed", first.txid, 6),
    ]
    with units.transaction() as unit:
        heights = [height for height, _ in unit.scanned_blocks()]
    assert heights == list(range(chain.height, start - 1, -1))


def test_sequence_numbers_grow_by_one_across_passes_and_restarts(make_scanner, chain, events, pay):
    make_scanner().run()
    for _ in range(3):
        chain.mine(pay(ALICE, 1), pay(BOB, 2))
        make_scanner().run()
    sequences = [event["sequence"] for event in events.all()]
    assert sequences == list(range(1, len(sequences) + 1))
    # Each block: 2 seen and Bob's confirmed; then Alice's first at 2 and 3, her second at 2.
    assert len(sequences) == 3 * 3 + 3


def test_a_mempool_transfer_is_seen_then_counted_from_its_block(make_scanner, chain, events, clock, pay):
    scanner = make_scanner()
    scanner.run()
    payment = chain.send(pay(ALICE, 9))
    scanner.run()
    (seen,) = events.new()
    assert (seen["type"], seen["block_height"], seen["confirmations"]) == ("transfer_seen", None, 0)
    assert datetime.fromisoformat(seen["occurred_at"]) == clock()
    clock.advance(3600)  # the block's time (fake chain) is long before: it sets when it happened
    mined = chain.mine()
    scanner.run()
    (counted,) = events.new()
    assert (counted["type"], counted["block_height"], counted["block_hash"], counted["confirmations"]) == (
        "transfer_confirmations",
        mined.height,
        mined.hash,
        1,
    )
    assert datetime.fromisoformat(counted["occurred_at"]) == datetime.fromtimestamp(mined.time, UTC)
    scanner.run()
    assert events.new() == []
    assert payment.txid == seen["txid"]


def test_a_dropped_mempool_transfer_is_reverted(make_scanner, chain, events, clock, pay):
    scanner = make_scanner()
    payment = chain.send(pay(ALICE, 9))
    scanner.run()
    chain.drop(payment.txid)
    clock.advance(1)
    scanner.run()
    assert events.kinds() == [("transfer_seen", payment.txid, 0), ("transfer_reverted", payment.txid, 0)]


def test_a_replaced_mempool_transfer_is_reverted_and_its_replacement_seen(make_scanner, chain, events, clock, pay):
    scanner = make_scanner()
    original = chain.send(pay(ALICE, 9, index=1))
    scanner.run()
    chain.drop(original.txid)
    replacement = chain.send(pay(ALICE, 9, index=0))
    clock.advance(1)
    scanner.run()
    assert events.kinds() == [
        ("transfer_seen", original.txid, 0),
        ("transfer_seen", replacement.txid, 0),
        ("transfer_reverted", original.txid, 0),
    ]


def test_a_pending_transfer_is_not_reverted_when_its_watch_ends(make_scanner, chain, watched, events, clock, pay):
    scanner = make_scanner()
    payment = chain.send(pay(ALICE, 9))
    scanner.run()
    watched.discard(ALICE)  # the watch ended while the transfer waits in the mempool
    clock.advance(1)
    scanner.run()
    assert events.kinds() == [("transfer_seen", payment.txid, 0)]


def test_a_transfer_mined_between_the_mempool_read_and_the_tip_is_not_reverted(make_scanner, chain, events, clock, pay):
    scanner = make_scanner()
    payment = chain.send(pay(ALICE, 9))
    scanner.run()
    clock.advance(1)
    chain.then["tip"] = chain.mine  # mined during the pass: the tip it read is older than the block
    scanner.run()
    assert events.kinds() == [("transfer_seen", payment.txid, 0)]  # still in the mempool it read, not reverted
    scanner.run()
    assert events.kinds() == [("transfer_confirmations", payment.txid, 1)]


def test_a_node_error_stops_the_pass_and_the_next_pass_resumes_where_it_stopped(make_scanner, chain, events, pay):
    scanner = make_scanner()
    scanner.run()
    payment = pay(ALICE, 1)
    chain.mine(payment)
    chain.down = True
    with pytest.raises(NodeError):
        scanner.run()
    assert events.new() == []
    chain.down = False
    scanner.run()
    assert events.kinds() == [("transfer_seen", payment.txid, 1)]


def test_a_pass_with_nothing_to_record_takes_no_turn_on_the_sequence(make_scanner, chain, pay, monkeypatch):
    scanner = make_scanner()
    scanner.run()
    chain.mine(pay(ALICE, 1))
    chain.send(pay(ALICE, 2))
    scanner.run()  # one transfer confirming, one in the mempool
    turns = []
    lock_sequence = MemoryWatcher.lock_sequence
    monkeypatch.setattr(MemoryWatcher, "lock_sequence", lambda unit: turns.append(chain.network) or lock_sequence(unit))
    scanner.run()
    assert turns == []
    chain.mine_empty()
    scanner.run()
    assert turns == [chain.network]  # the block, with the confirmation it adds


def test_the_last_block_confirms_a_busy_blocks_transfers_with_one_read_not_one_each(
    make_scanner, chain, events, pay, monkeypatch
):
    scanner = make_scanner()
    scanner.run()
    paid = [pay(ALICE, n + 1) for n in range(20)]
    chain.mine(*paid)
    scanner.run()
    events.kinds()
    reads = []
    tracked_among = MemoryWatcher.tracked_among
    monkeypatch.setattr(
        MemoryWatcher, "tracked_among", lambda unit, keys: reads.append(keys) or tracked_among(unit, keys)
    )
    chain.mine_empty(2)
    scanner.run()
    assert sorted(events.kinds()) == sorted(("transfer_confirmed", payment.txid, 3) for payment in paid)
    assert not any(reads)  # the confirming transfers came with one read of them all, none looked up alone
