"""The money rules on a real regtest node and its watcher: a rate locked before a fall is no option on the
market, and "J'ai payé" counts once however often it is pressed.

At the rates file's 100 USD/LTC a 100 USD top-up is 1 LTC (100,000,000 litoshi).
"""

import pytest

from services.payments.tests.helpers import timeline_kinds
from tests.integration.chain_payments.conftest import ACCOUNT

on_litecoin = pytest.mark.parametrize("regtest", ["litecoin"], indirect=True)
PRESSES = 50


def ledger(payments) -> list[tuple[int, str]]:
    """The customer's balance movements as (cents, reason), oldest first."""
    return [(e["amount_usd_cents"], e["reason"]) for e in reversed(payments.list_ledger(ACCOUNT)["items"])]


def distinct(events: list[dict]) -> set[str]:
    return {e["event_id"] for e in events}


@on_litecoin
def test_a_topup_and_its_overpayment_count_at_the_lower_of_the_locked_and_the_fresh_rate(
    node, shop, payments, set_rates, start_watcher, wait
):
    start_watcher()
    wait(lambda: shop.method()["available"], what="the watcher's first report")
    topup = payments.create_topup(ACCOUNT, 10_000, "LTC", "litecoin")  # locked at 100 USD/LTC
    payment = topup["payment"]
    assert payment["amount_base_units"] == 100_000_000
    set_rates(LTC="80")  # LTC falls after the lock
    node.pay(payment["address"], 150_000_000)  # 1.5 LTC
    node.mine(2)
    wait(lambda: shop.payment(payment)["status"] == "overpaid", what="the top-up to settle")
    # 1 LTC and the excess 0.5 LTC at the fresh 80 USD, lower than the locked 100 (not 100.00 and 50.00 USD).
    wait(lambda: payments.get_balance(ACCOUNT)["available_usd_cents"] == 12_000, what="the credits")
    assert ledger(payments) == [(8_000, "topup"), (4_000, "overpayment")]
    assert payments.get_balance(ACCOUNT) == {"available_usd_cents": 12_000, "pending_usd_cents": 0}


@on_litecoin
def test_i_have_paid_pressed_fifty_times_at_once_is_noted_once_and_the_payment_settles_once(
    node, shop, payments, orders, payments_events, start_watcher, wait
):
    start_watcher()
    order, payment = shop.order_payment()
    txid = node.pay(payment["address"], payment["amount_base_units"])
    wait(lambda: shop.payment(payment)["status"] == "seen", what="the payment to be seen in the mempool")
    presses = [payments.report_payment.call_async(ACCOUNT, payment["id"]) for _ in range(PRESSES)]
    answers = [press.result() for press in presses]
    assert {a["reported_at"] for a in answers} == {answers[0]["reported_at"]} != {None}
    payments_events.wait_for("payment_reported", 1)
    wait(lambda: "payment_reported" in timeline_kinds(orders.get_order(ACCOUNT, order["id"])), what="the timeline")

    node.mine(2)
    shop.wait_paid(order)
    payments_events.wait_for("payment_settled", 1)
    # The outbox delivers at least once (a publish that failed goes out again with the same event_id, which
    # consumers drop): distinct events count.
    assert len(distinct(payments_events.of("payment_reported"))) == 1
    assert len(distinct(payments_events.of("payment_settled"))) == 1
    kinds = timeline_kinds(orders.get_order(ACCOUNT, order["id"]))
    assert (kinds.count("payment_reported"), kinds.count("paid")) == (1, 1)
    view = shop.payment(payment)
    assert [(t["txid"], t["state"]) for t in view["transfers"]] == [(txid, "confirmed")]
    assert (view["status"], view["confirmed_base_units"]) == ("settled", payment["amount_base_units"])
    assert payments.get_balance(ACCOUNT) == {"available_usd_cents": 0, "pending_usd_cents": 0}
