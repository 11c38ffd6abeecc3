"""Refunds of what an order could not use, through the running service on PostgreSQL: each payment given back
once, whichever way and however many refusals arrive together."""

import pytest
from nameko.standalone.events import event_dispatcher
from sqlalchemy import text

from kernodeck_contracts.events import PaymentRefused, ProvisioningFailed
from kernodeck_kit.testing import wait_until
from services.payments.tests.helpers import confirm

ACC = "acc-refunds"
BTC_SAT_PER_CENT = 20  # at 50,000 USD/BTC
LTC_LITOSHI_PER_CENT = 10_000  # at 100 USD/LTC


@pytest.fixture
def paid_twice(payments_ready, payments, watcher, new_order, orders):
    """An order of 189.00 USD paid in full by BTC, then paid again by LTC (two intents opened side by side):
    both settle and are booked into sales. Returns (order, the LTC payment)."""
    order = new_order(ACC)
    btc = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    ltc = payments.create_order_payment(ACC, order["id"], "LTC", "litecoin")
    confirm(watcher, btc, 18_900 * BTC_SAT_PER_CENT)
    orders.moved(order, "paid")
    confirm(watcher, ltc, 18_900 * LTC_LITOSHI_PER_CENT)
    assert {p["status"] for p in payments.list_order_payments(ACC, order["id"])} == {"settled"}
    return order, ltc


def refusal(order: dict, payment: dict) -> PaymentRefused:
    return PaymentRefused(
        order_id=order["id"], account_id=ACC, payment_id=payment["id"], amount_usd_cents=18_900, reason="order_paid"
    )


def failure(order: dict) -> ProvisioningFailed:
    return ProvisioningFailed(order_id=order["id"], account_id=ACC, reason="no_node_passed: test")


def refunded(payments) -> list[tuple[int, str]]:
    return sorted(
        (e["amount_usd_cents"], e["ref"])
        for e in payments.list_ledger(ACC)["items"]
        if e["reason"] == "refused_payment"
    )


def test_a_failed_delivery_then_the_second_payment_refused_give_each_payment_back_once(paid_twice, payments, configs):
    order, ltc = paid_twice
    dispatch = event_dispatcher(configs["payments"])
    for event in (failure(order), refusal(order, ltc)):
        dispatch(event.source, event.type, event.to_message())
    wait_until(lambda: len(refunded(payments)) == 2, what="both payments refunded")
    wait_until(lambda: payments.get_balance(ACC)["available_usd_cents"] == 2 * 18_900, what="the balance")
    assert {ref for _, ref in refunded(payments)} == {p["id"] for p in payments.list_order_payments(ACC, order["id"])}


def test_refusals_arriving_together_refund_no_payment_twice(paid_twice, payments, configs, payments_db):
    order, ltc = paid_twice
    dispatch = event_dispatcher(configs["payments"])
    # The test holds the ledger until all three refusals are under way, so that none reads it before another
    # writes: only the lock on the order keeps them from each refunding everything they read.
    with payments_db.engine.connect() as holder:
        holder.execute(text("LOCK TABLE ledger_entries IN ACCESS EXCLUSIVE MODE"))
        for event in (failure(order), failure(order), refusal(order, ltc)):
            dispatch(event.source, event.type, event.to_message())
        wait_until(lambda: waiting_on_locks(payments_db) >= 3, what="the three refusals to wait")
        holder.rollback()
    wait_until(lambda: len(refunded(payments)) == 2, what="both payments refunded")
    wait_until(lambda: waiting_on_locks(payments_db) == 0, what="every refusal applied")
    assert payments.get_balance(ACC)["available_usd_cents"] == 2 * 18_900
    assert [cents for cents, _ in refunded(payments)] == [18_900, 18_900]


def waiting_on_locks(payments_db) -> int:
    return payments_db.rows("SELECT count(*) AS n FROM pg_locks WHERE NOT granted")[0]["n"]
