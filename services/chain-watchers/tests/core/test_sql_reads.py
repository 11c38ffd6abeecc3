"""What only the SQL unit shows (on SQLite, migrated with the service's own scripts): a busy block, a busy
mempool and a look at many addresses cost no more reads than one transfer; the sequence row is made once; a
large answer from payments is stored once, in batches."""

from contextlib import contextmanager

import pytest
from sqlalchemy import event, text

from kernodeck_watchers.runtime import WatcherRuntime
from kernodeck_watchers.store.unit import watcher_units
from kernodeck_watchers.targeted import look_at

from .test_runtime import SETTINGS, Lock, Payments

ALICE = "alice"
LATE = "late"


@pytest.fixture
def units(store, chain):
    return watcher_units(store, chain.network)


@pytest.fixture(autouse=True)
def watching(watched):
    watched.add(ALICE, 3)


@pytest.fixture
def counted_reads(store):
    """`with counted_reads() as reads:` -> the SELECT statements the store sent meanwhile."""

    @contextmanager
    def counting():
        reads: list[str] = []

        def count(_conn, _cursor, statement, *_args):
            if statement.lstrip().upper().startswith("SELECT"):
                reads.append(statement)

        event.listen(store.engine, "before_cursor_execute", count)
        try:
            yield reads
        finally:
            event.remove(store.engine, "before_cursor_execute", count)

    return counting


def test_a_block_paying_many_watched_addresses_takes_no_more_reads_than_one_paying_one(
    make_scanner, chain, watched, pay, counted_reads
):
    """A busy block's transfers: what is stored of them is read in one query, not one per transfer."""
    scanner = make_scanner()
    scanner.run()

    def reads_of_a_block_paying(count: int) -> int:
        addresses = [f"busy-{count}-{n}" for n in range(count)]
        for address in addresses:
            watched.add(address, 1)  # confirmed in its block: nothing left to count by the next pass
        chain.mine(*(pay(address, 5, index=n, txid=f"busy-{count}") for n, address in enumerate(addresses)))
        with counted_reads() as reads:
            scanner.run()
        return len(reads)

    one = reads_of_a_block_paying(1)
    assert reads_of_a_block_paying(40) <= one


def test_a_mempool_holding_many_payments_takes_no_more_reads_than_one_holding_one(
    make_scanner, chain, watched, pay, counted_reads
):
    scanner = make_scanner()
    scanner.run()

    def reads_of_a_pass_over_a_mempool_of(count: int) -> int:
        for n in range(count):
            watched.add(f"pending-{count}-{n}", 3)
            chain.send(pay(f"pending-{count}-{n}", 5, index=n, txid=f"pending-{count}"))
        scanner.run()  # seen
        with counted_reads() as reads:
            scanner.run()  # still there
        chain.mine()
        scanner.run()
        return len(reads)

    one = reads_of_a_pass_over_a_mempool_of(1)
    assert reads_of_a_pass_over_a_mempool_of(40) <= one


def test_the_sequence_row_is_made_once(make_scanner, store, chain, pay):
    statements = []
    event.listen(
        store.engine, "before_cursor_execute", lambda conn, cursor, statement, *rest: statements.append(statement)
    )
    scanner = make_scanner()
    for _ in range(3):
        chain.mine(pay(ALICE, 1))
        scanner.run()
    assert sum(statement.startswith("INSERT INTO watcher_sequences") for statement in statements) == 1


def test_a_look_at_many_paid_addresses_takes_no_more_reads_than_a_look_at_one(
    make_scanner, units, chain, clock, pay, counted_reads
):
    """A busy block's new watches looked at together: their stored transfers and blocks are read in one query
    each, not one per transfer."""
    scanner = make_scanner()
    scanner.run()

    def reads_of_a_look_at(count: int) -> int:
        addresses = {f"{LATE}-{count}-{n}": 2 for n in range(count)}
        chain.mine(*(pay(address, 5, index=n, txid=f"busy-{count}") for n, address in enumerate(addresses)))
        scanner.run()
        with counted_reads() as reads:
            assert look_at(units, chain, addresses, 10, clock) == count
        return len(reads)

    one = reads_of_a_look_at(1)
    assert reads_of_a_look_at(40) <= one


def test_a_large_answer_from_payments_is_stored_once_in_batches(units, store, chain):
    runtime, payments = WatcherRuntime(SETTINGS, chain, Lock()), Payments()
    for i in range(2_500):
        payments.watch(f"addr{i}")
    runtime.turn(units, payments)
    restarted = WatcherRuntime(SETTINGS, chain, Lock())
    restarted.turn(units, payments)  # the same answer again
    assert len(runtime.watchlist.watched) == len(restarted.watchlist.watched) == 2_500
    with store.read() as session:
        assert session.execute(text("SELECT count(*) FROM watched_addresses")).scalar() == 2_500
