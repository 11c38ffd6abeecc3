""" "J'ai payé": a targeted look at one address records what the scans missed, and nothing twice."""

import pytest

from kernodeck_watchers.targeted import look_at

pytestmark = pytest.mark.unit

LATE = "late"  # an address the scanner did not watch when its payment was mined


def test_a_mempool_transfer_is_recorded_at_once(make_scanner, units, chain, events, clock, pay):
    make_scanner().run()
    payment = chain.send(pay(LATE, 5))
    assert look_at(units, chain, {LATE: 2}, 10, clock) == 1
    (seen,) = events.new()
    assert (seen["type"], seen["txid"], seen["block_height"], seen["amount"]) == (
        "transfer_seen",
        payment.txid,
        None,
        5,
    )


def test_a_transfer_in_a_scanned_block_is_recorded_and_then_counted_by_the_scans(
    make_scanner, units, chain, watched, events, clock, pay
):
    scanner = make_scanner()
    scanner.run()
    payment = pay(LATE, 5)
    chain.mine(payment)
    scanner.run()
    assert events.new() == []  # not watched: the scan saw nothing
    assert look_at(units, chain, {LATE: 2}, 10, clock) == 1
    assert events.kinds() == [("transfer_seen", payment.txid, 1)]
    watched.add(LATE, 2)
    chain.mine_empty()
    scanner.run()
    assert events.kinds() == [("transfer_confirmed", payment.txid, 2)]


def test_a_block_the_scanner_has_not_reached_is_left_to_it(make_scanner, units, chain, events, clock, pay):
    make_scanner().run()
    chain.mine(pay(LATE, 5))
    assert look_at(units, chain, {LATE: 2}, 10, clock) == 0
    assert events.new() == []


def test_a_transfer_whose_block_is_replaced_during_the_look_is_left_to_the_scanner(
    make_scanner, units, chain, events, clock, pay
):
    scanner = make_scanner()
    scanner.run()
    chain.mine(pay(LATE, 5))
    scanner.run()

    def replaced():  # a reorg between the look's read and its record, and a scan of the new block
        chain.reorg(1, [])
        scanner.run()

    chain.then["address_activity"] = replaced
    assert look_at(units, chain, {LATE: 2}, 10, clock) == 0
    assert events.new() == []


def test_only_the_last_blocks_are_looked_at(make_scanner, units, chain, events, clock, pay):
    scanner = make_scanner()
    scanner.run()
    chain.mine(pay(LATE, 5))
    chain.mine_empty(5)
    scanner.run()
    assert look_at(units, chain, {LATE: 2}, 5, clock) == 0
    assert look_at(units, chain, {LATE: 2}, 6, clock) == 1


def test_looking_twice_records_nothing_new(make_scanner, units, chain, events, clock, pay):
    scanner = make_scanner()
    scanner.run()
    chain.mine(pay(LATE, 5))
    scanner.run()
    chain.send(pay(LATE, 6))
    assert look_at(units, chain, {LATE: 2}, 10, clock) == 2
    assert look_at(units, chain, {LATE: 2}, 10, clock) == 0
    assert [event["sequence"] for event in events.all()] == [1, 2]


def test_a_look_before_any_scan_numbers_its_events_from_one(units, chain, events, clock, pay):
    chain.send(pay(LATE, 5))
    assert look_at(units, chain, {LATE: 2}, 10, clock) == 1
    assert [event["sequence"] for event in events.all()] == [1]


def test_a_transfer_recorded_during_a_pass_is_not_reverted_by_that_pass(
    make_scanner, units, chain, watched, events, clock, pay
):
    scanner = make_scanner()
    scanner.run()
    sent = []

    def paid_meanwhile():  # "J'ai payé" between the pass's mempool read and its settling
        clock.advance(1)
        sent.append(chain.send(pay(LATE, 5)))
        watched.add(LATE, 2)
        assert look_at(units, chain, {LATE: 2}, 10, clock) == 1

    chain.then["tip"] = paid_meanwhile
    scanner.run()
    assert events.kinds() == [("transfer_seen", sent[0].txid, 0)]  # the mempool it read predates the payment
    scanner.run()
    assert events.kinds() == []
