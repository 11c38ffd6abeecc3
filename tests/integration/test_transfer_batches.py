"""A block's transfers applied together by payments (its batch handlers), with the real orders, on PostgreSQL:
every intent settled once and in the transfers' order, when the batch is cut off by a restart, and when
PostgreSQL refuses it (a deadlock) and it goes again one event at a time."""

import eventlet
import pytest
from sqlalchemy import text

from kernodeck_contracts.events import TransferConfirmed
from kernodeck_kit.testing import wait_until
from kernodeck_payments.service import PaymentsService
from kernodeck_payments.store.units import SqlSettlement
from services.payments.tests.helpers import CONFIRMED, failed, timeline_kinds, transfer_fields, txid

ACC = "acc1"
BTC_AMOUNT = 378_000  # an h100 order of 3 days, 1 lot: 189 USD at 50,000 USD/BTC
BLOCK = 6  # transfers in the block, one transaction paying six orders
FORCED_DEADLOCK = "DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = 'deadlock_detected'; END $$"


@pytest.fixture
def block(payments_ready, new_order, watcher):
    """Six orders with their intents, and the watcher's transfer_confirmed of each, in the block's order."""
    paying = []
    for _ in range(BLOCK):
        order = new_order(ACC)
        paying.append((order, payments_ready.create_order_payment(ACC, order["id"], "BTC", "bitcoin")))
    tx = txid()
    events = [
        watcher.event(
            TransferConfirmed,
            **transfer_fields(
                payment, BTC_AMOUNT, tx=tx, index=i, block_height=100, confirmations=CONFIRMED["bitcoin"]
            ),
        )
        for i, (_, payment) in enumerate(paying)
    ]
    return paying, events


@pytest.fixture
def booking_in_a_batch(monkeypatch):
    """`booking_in_a_batch(then)`: `then(unit)` runs the first time a unit books its second order payment (a
    batch's second intent settling: the middle of a batch), before that booking."""

    def install(then):
        real, bookings = SqlSettlement.book_order_payment, {}

        def book(self, *args):
            bookings[id(self)] = bookings.get(id(self), 0) + 1
            if bookings[id(self)] == 2 and not install.done:
                install.done = True
                then(self)
            real(self, *args)

        install.done = False
        monkeypatch.setattr(SqlSettlement, "book_order_payment", book)
        return install

    return install


def publish_while_stopped(running, watcher, events) -> None:
    """Publish the block's events while payments is down, so that they reach its next start together."""
    running["payments"].stop()
    for event in events:
        watcher.publish(event)


def assert_each_paid_once_in_block_order(paying, orders, payments_events, payments_db) -> None:
    for order, _ in paying:
        wait_until(lambda order=order: orders.get_order(ACC, order["id"])["status"] == "paid", what="every order paid")
        assert timeline_kinds(orders.get_order(ACC, order["id"])).count("paid") == 1
    settled = payments_events.wait_for("payment_settled", BLOCK)
    # In the block's order; the outbox may publish an event twice (at least once), never two of one intent.
    assert list(dict.fromkeys(e["payment_id"] for e in settled)) == [payment["id"] for _, payment in paying]
    assert len({e["event_id"] for e in settled}) == BLOCK
    rows = payments_db.rows("SELECT ref FROM ledger_entries WHERE reason = 'order_payment' ORDER BY id")
    assert [row["ref"] for row in rows] == [order["id"] for order, _ in paying]


def test_a_restart_in_the_middle_of_a_batch_settles_every_intent_once_in_order(
    block, running, watcher, container_factory, configs, orders, payments_events, payments_db, booking_in_a_batch
):
    paying, events = block
    cut_off = eventlet.Event()

    def stop_here(_unit):
        cut_off.send()
        eventlet.Event().wait()  # the process stops here: its transaction is never committed

    hook = booking_in_a_batch(stop_here)
    publish_while_stopped(running, watcher, events)
    interrupted = container_factory(PaymentsService, configs["payments"])
    interrupted.start()
    with eventlet.Timeout(30):
        cut_off.wait()
    assert hook.done and payments_db.rows("SELECT * FROM chain_transfers") == []
    interrupted.kill()

    container_factory(PaymentsService, configs["payments"]).start()  # the restart: the whole batch again
    assert_each_paid_once_in_block_order(paying, orders, payments_events, payments_db)
    assert len(payments_db.rows("SELECT * FROM chain_transfers WHERE disposition IS NOT NULL")) == BLOCK


def test_a_batch_postgresql_refuses_goes_again_one_event_at_a_time_each_applied_once(
    block, running, watcher, container_factory, configs, orders, payments_events, payments_db, booking_in_a_batch
):
    paying, events = block
    hook = booking_in_a_batch(lambda unit: unit.session.execute(text(FORCED_DEADLOCK)))
    failures = failed("on_transfer_confirmed")
    publish_while_stopped(running, watcher, events)
    container_factory(PaymentsService, configs["payments"]).start()
    assert_each_paid_once_in_block_order(paying, orders, payments_events, payments_db)
    assert hook.done and failed("on_transfer_confirmed") == failures + 1  # the batch, then each event alone
