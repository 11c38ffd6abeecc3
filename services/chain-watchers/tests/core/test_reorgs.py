"""Reorganisations: the walk back to the common ancestor, withdrawals, and the rescan."""

import pytest

from kernodeck_watchers.scanner import CursorMoved, ReorgTooDeep

pytestmark = pytest.mark.unit

ALICE = "alice"


@pytest.fixture(autouse=True)
def watching(watched):
    watched.add(ALICE, 3)


@pytest.fixture
def scanner(make_scanner):
    scanner = make_scanner()
    scanner.run()
    return scanner


def test_only_transfers_in_orphaned_blocks_are_reverted(scanner, chain, events, pay):
    kept, lost = pay(ALICE, 1), pay(ALICE, 2)
    chain.mine(kept)
    chain.mine(lost)
    scanner.run()
    events.new()
    chain.reorg(1, [], [])
    scanner.run()
    assert events.kinds() == [
        ("transfer_reverted", lost.txid, 0),
        ("transfer_confirmed", kept.txid, 3),
    ]


def test_a_reverted_transfer_carries_its_orphaned_block(scanner, chain, events, pay):
    lost = pay(ALICE, 2)
    orphaned = chain.mine(lost)
    scanner.run()
    events.new()
    chain.reorg(1, [], [])
    scanner.run()
    (reverted,) = events.new()
    assert (reverted["type"], reverted["block_height"], reverted["block_hash"]) == (
        "transfer_reverted",
        orphaned.height,
        orphaned.hash,
    )


def test_a_transfer_in_the_new_chain_is_seen_again_in_its_new_block(scanner, chain, events, pay):
    moved = pay(ALICE, 2)
    chain.mine(moved)
    scanner.run()
    events.new()
    chain.reorg(1, [], [moved])
    scanner.run()
    new_events = events.new()
    assert [(e["type"], e["block_height"], e["confirmations"]) for e in new_events] == [
        ("transfer_reverted", chain.height - 1, 0),
        ("transfer_seen", chain.height, 1),
    ]
    assert new_events[1]["block_hash"] == chain.best[-1].ref.hash
    assert new_events[0]["sequence"] < new_events[1]["sequence"]


def test_a_same_height_replacement_of_the_tip_is_noticed(scanner, chain, events, units, pay):
    lost = pay(ALICE, 2)
    chain.mine(lost)
    scanner.run()
    events.new()
    chain.reorg(1, [])  # same height, another hash
    scanner.run()
    assert events.kinds() == [("transfer_reverted", lost.txid, 0)]
    with units.transaction() as unit:
        assert unit.get_cursor().hash == chain.best[-1].ref.hash


def test_a_tip_gone_back_on_the_scanned_chain_is_a_lagging_node_not_a_reorganisation(
    scanner, chain, events, units, pay
):
    kept = pay(ALICE, 2)
    chain.mine(kept)
    chain.mine_empty(2)
    scanner.run()
    events.new()
    followed = list(chain.best)
    chain.best = followed[:-3]  # a load-balanced provider's backend three blocks behind answers
    scanner.run()
    assert events.kinds() == []
    with units.transaction() as unit:
        assert unit.get_cursor().hash == followed[-1].ref.hash
    chain.best = followed  # the next answer comes from an up-to-date backend
    chain.mine_empty()
    scanner.run()
    assert events.kinds() == []  # confirmed at 2 already: nothing withdrawn, nothing seen twice


def test_a_shorter_best_chain_with_another_block_at_its_tip_rewinds_the_cursor(scanner, chain, events, units, pay):
    lost = pay(ALICE, 2)
    chain.mine(lost)
    chain.mine_empty(2)
    scanner.run()
    events.new()
    chain.orphan(3)
    chain.mine_empty()  # the tip is two blocks below the cursor, and not the block scanned there
    scanner.run()
    assert events.kinds() == [("transfer_reverted", lost.txid, 0)]
    with units.transaction() as unit:
        assert unit.get_cursor().height == chain.height
        assert unit.scanned_blocks()[0] == (chain.height, chain.best[-1].ref.hash)


def test_a_reorg_found_by_a_parent_mismatch_during_the_scan(scanner, chain, events, pay):
    lost, found = pay(ALICE, 2), pay(ALICE, 3)
    chain.mine(lost)
    scanner.run()
    events.new()
    chain.mine_empty()
    # Right after the node gives its tip, its chain changes under the scanner.
    chain.then["tip"] = lambda: chain.reorg(2, [found], [], [])
    scanner.run()
    assert events.kinds() == [
        ("transfer_reverted", lost.txid, 0),
        ("transfer_seen", found.txid, 2),
    ]


def test_a_reorg_deeper_than_the_remembered_blocks_stops_without_a_guess(make_scanner, chain, events, units, pay):
    scanner = make_scanner(history_blocks=3)
    scanner.run()
    chain.mine(pay(ALICE, 2))
    chain.mine_empty(4)
    scanner.run()
    events.new()
    with units.transaction() as unit:
        before = unit.get_cursor()
    chain.reorg(4, [], [], [], [])
    with pytest.raises(ReorgTooDeep):
        scanner.run()
    assert events.new() == []
    with units.transaction() as unit:
        assert unit.get_cursor() == before


def test_a_pass_stops_when_another_replica_moved_the_cursor(make_scanner, chain, events, pay):
    first, second = make_scanner(), make_scanner()
    first.run()
    payment = pay(ALICE, 1)
    chain.mine(payment)
    # `second` reads the cursor and fetches the block, then `first` scans it before `second` commits.
    chain.then["block"] = first.run
    with pytest.raises(CursorMoved):
        second.run()
    assert events.kinds() == [("transfer_seen", payment.txid, 1)]
