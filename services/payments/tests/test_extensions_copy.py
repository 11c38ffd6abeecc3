"""Extensions paid like orders, on the broker: payments' copy from support's events, a crypto intent or the
balance, and the refund of a payment support could not use."""

from datetime import UTC, datetime, timedelta

from kernodeck_contracts.events import ExtensionConfirmed, ExtensionPaid, ExtensionPaymentRefused
from kernodeck_kit.testing import wait_until
from services.payments.tests.helpers import code_of, confirm

ACC = "acc1"
SAT_PER_CENT = 20  # satoshi per cent at 50,000 USD/BTC


def confirmed(extension_id="x1", due_by=None) -> ExtensionConfirmed:
    due_by = due_by or datetime.now(UTC) + timedelta(days=1)
    return ExtensionConfirmed(
        extension_id=extension_id, order_id="o1", account_id=ACC, extra_days=7, price_usd_cents=42_000, due_by=due_by
    )


def test_a_confirmed_extension_is_paid_by_intent_or_balance_once(payments_ready, watcher):
    assert code_of(payments_ready.create_extension_payment, ACC, "x1", "BTC", "bitcoin") == "not_found"
    watcher.deliver(confirmed())
    assert code_of(payments_ready.create_extension_payment, "acc2", "x1", "BTC", "bitcoin") == "not_found"
    intent = payments_ready.create_extension_payment(ACC, "x1", "BTC", "bitcoin")
    assert (intent["purpose"], intent["extension_id"], intent["order_id"], intent["amount_usd_cents"]) == (
        "extension", "x1", "o1", 42_000,
    )  # fmt: skip
    assert payments_ready.list_payments_for_orders(ACC, ["x1"])["x1"][0]["id"] == intent["id"]
    assert payments_ready.list_order_payments(ACC, "o1") == []  # the order's own payments are apart
    assert code_of(payments_ready.pay_extension_with_balance, ACC, "x1") == "insufficient_balance"
    topup = payments_ready.create_topup(ACC, 50_000, "BTC", "bitcoin")
    confirm(watcher, topup["payment"], 50_000 * SAT_PER_CENT)
    wait_until(lambda: payments_ready.get_balance(ACC)["available_usd_cents"] == 50_000, what="the top-up")
    paid = payments_ready.pay_extension_with_balance(ACC, "x1")
    assert (paid["payment_id"], paid["order_id"], paid["extension_id"]) == ("balance-x1", "o1", "x1")
    assert payments_ready.get_balance(ACC)["available_usd_cents"] == 8_000
    watcher.deliver(ExtensionPaid(extension_id="x1", order_id="o1", account_id=ACC, extra_days=7))
    assert code_of(payments_ready.create_extension_payment, ACC, "x1", "BTC", "bitcoin") == "invalid_state"


def test_an_extension_past_its_due_date_takes_no_payment(payments_ready, watcher):
    watcher.deliver(confirmed("x2", due_by=datetime.now(UTC) - timedelta(seconds=1)))
    assert code_of(payments_ready.create_extension_payment, ACC, "x2", "BTC", "bitcoin") == "invalid_state"


def test_a_payment_support_refused_is_credited_once(payments_ready, watcher):
    refused = ExtensionPaymentRefused(
        extension_id="x1",
        order_id="o1",
        account_id=ACC,
        payment_id="pi9",
        amount_usd_cents=42_000,
        reason="past_due_date",
    )
    watcher.deliver(refused)
    watcher.deliver(refused)
    assert payments_ready.get_balance(ACC)["available_usd_cents"] == 42_000
