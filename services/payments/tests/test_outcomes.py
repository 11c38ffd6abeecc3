"""What a payment brought to the balance beyond paying what it was for, and a top-up found again by its id."""

from kernodeck_kit.testing import wait_until
from services.payments.tests.helpers import code_of, confirm

ACC = "acc-outcomes"
SAT_PER_CENT = 20  # satoshi per cent at 50,000 USD/BTC


def test_what_payments_credited_shows_with_each_payment(payments_ready, payments, watcher, new_order):
    order = new_order(ACC)
    paying = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    confirm(watcher, paying, int(paying["amount_base_units"]) + 1_000 * SAT_PER_CENT)  # 10.00 USD too much
    topup = payments.create_topup(ACC, 10_000, "BTC", "bitcoin")["payment"]
    confirm(watcher, topup, int(topup["amount_base_units"]) + 500 * SAT_PER_CENT)
    wait_until(lambda: payments.get_payment(ACC, topup["id"])["status"] == "overpaid", what="the top-up")

    found = payments.list_payment_outcomes(ACC, [paying["id"], topup["id"], "unknown"])
    assert [(c["amount_usd_cents"], c["reason"]) for c in found[paying["id"]]["credits"]] == [(1_000, "overpayment")]
    assert [(c["amount_usd_cents"], c["reason"]) for c in found[topup["id"]]["credits"]] == [
        (10_000, "topup"),
        (500, "overpayment"),
    ]
    assert found["unknown"] == {"credits": [], "reviews": []}
    assert payments.list_payment_outcomes("someone-else", [paying["id"]])[paying["id"]]["credits"] == []


def test_a_topup_is_found_again_by_its_owner_only(payments_ready, payments):
    created = payments.create_topup(ACC, 50_000, "LTC", "litecoin")
    found = payments.get_topup(ACC, created["id"])
    assert (found["id"], found["amount_usd_cents"], found["payment"]["address"]) == (
        created["id"],
        50_000,
        created["payment"]["address"],
    )
    assert code_of(payments.get_topup, "someone-else", created["id"]) == "not_found"
    assert code_of(payments.get_topup, ACC, "no-such-topup") == "not_found"
