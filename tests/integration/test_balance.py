"""The USD balance through the running service: top-up sizes, pending vs available, paying an order from it.

The ledger invariant (every account sums to zero, balances match their
entries) is checked after each test by the `configs` fixture.
"""

from kernodeck_kit.testing import wait_until
from kernodeck_payments.ledger.store import assert_invariant
from services.payments.tests.helpers import code_of, concurrently, confirm, refusal, timeline_kinds

ACC = "acc1"
SAT_PER_CENT = 20  # satoshi per cent at 50,000 USD/BTC


def settle_topup(payments, watcher, usd_cents: int, account: str = ACC) -> dict:
    topup = payments.create_topup(account, usd_cents, "BTC", "bitcoin")
    assert topup["payment"]["amount_base_units"] == usd_cents * SAT_PER_CENT
    confirm(watcher, topup["payment"], usd_cents * SAT_PER_CENT)
    return topup


def wait_paid(orders, order_id, account=ACC) -> dict:
    return wait_until(
        lambda: (o := orders.get_order(account, order_id))["status"] == "paid" and o, what="the order to be paid"
    )


# --- top-ups -----------------------------------------------------------------


def test_the_four_topup_sizes_are_accepted_and_pending_until_settled(payments_ready, payments):
    sizes = [10_000, 50_000, 200_000, 1_000_000]

    topups = [payments.create_topup(ACC, cents, "BTC", "bitcoin") for cents in sizes]

    assert [t["amount_usd_cents"] for t in topups] == sizes
    assert [t["payment"]["amount_usd_cents"] for t in topups] == sizes
    assert [t["payment"]["amount_base_units"] for t in topups] == [c * SAT_PER_CENT for c in sizes]
    assert [(t["status"], t["payment"]["purpose"], t["payment"]["topup_id"]) for t in topups] == [
        ("awaiting_transfer", "topup", t["id"]) for t in topups
    ]
    assert payments.get_balance(ACC) == {"available_usd_cents": 0, "pending_usd_cents": sum(sizes)}
    assert sorted(t["id"] for t in payments.list_topups(ACC)["items"]) == sorted(t["id"] for t in topups)
    assert payments.get_balance("acc2") == {"available_usd_cents": 0, "pending_usd_cents": 0}


def test_other_topup_amounts_are_refused(payments_ready, payments):
    for cents in (15_000, 0, 9_999, -10_000, 10_001, True):  # 150, 0, 99.99, -100, 100.01 USD, and a boolean
        refused = refusal(payments.create_topup, ACC, cents, "BTC", "bitcoin")
        assert (refused.code, [error["field"] for error in refused.errors]) == ("validation_error", ["amount_usd"])

    assert payments.list_topups(ACC)["items"] == []
    assert payments.get_balance(ACC) == {"available_usd_cents": 0, "pending_usd_cents": 0}


def test_a_pending_topup_is_not_spendable_and_a_settled_one_is(payments_ready, payments, orders, watcher, new_order):
    topup = payments.create_topup(ACC, 50_000, "BTC", "bitcoin")
    order = new_order(ACC)

    assert payments.get_balance(ACC) == {"available_usd_cents": 0, "pending_usd_cents": 50_000}
    assert code_of(payments.pay_with_balance, ACC, order["id"]) == "insufficient_balance"

    confirm(watcher, topup["payment"], 50_000 * SAT_PER_CENT)
    assert payments.get_balance(ACC) == {"available_usd_cents": 50_000, "pending_usd_cents": 0}
    [listed] = payments.list_topups(ACC)["items"]
    assert listed["status"] == "credited"


# --- paying from the balance ---------------------------------------------------


def test_paying_with_an_insufficient_balance_changes_nothing(
    payments_ready, payments, orders, watcher, new_order, payments_db, payments_events
):
    settle_topup(payments, watcher, 10_000)  # 100 USD
    order = new_order(ACC)  # 189 USD
    before = payments_db.ledger()

    refused = refusal(payments.pay_with_balance, ACC, order["id"])

    assert refused.code == "insufficient_balance"
    assert payments.get_balance(ACC) == {"available_usd_cents": 10_000, "pending_usd_cents": 0}
    assert [(e["amount_usd_cents"], e["reason"]) for e in payments.list_ledger(ACC)["items"]] == [(10_000, "topup")]
    assert payments_db.ledger() == before
    assert orders.get_order(ACC, order["id"])["status"] == "awaiting_payment"
    assert payments_events.of("payment_settled") == []


def test_after_a_settled_topup_an_order_is_paid_from_the_balance(
    payments_ready, payments, orders, watcher, new_order, payments_events
):
    topup = settle_topup(payments, watcher, 50_000)
    order = new_order(ACC)

    paid = payments.pay_with_balance(ACC, order["id"])

    assert paid == {
        "payment_id": f"balance-{order['id']}",
        "order_id": order["id"],
        "extension_id": None,
        "amount_usd_cents": 18_900,
    }
    assert payments.get_balance(ACC) == {"available_usd_cents": 50_000 - 18_900, "pending_usd_cents": 0}
    assert [(e["amount_usd_cents"], e["reason"], e["ref"]) for e in payments.list_ledger(ACC)["items"]] == [
        (-18_900, "order_payment", order["id"]),
        (50_000, "topup", topup["payment"]["id"]),
    ]
    assert timeline_kinds(wait_paid(orders, order["id"])).count("paid") == 1
    [settled] = payments_events.wait_for("payment_settled", 1)
    assert (settled["order_id"], settled["amount_usd_cents"], settled["method"]) == (order["id"], 18_900, "balance")
    [debited] = payments_events.wait_for("balance_debited", 1)
    assert (debited["account_id"], debited["order_id"], debited["amount_usd_cents"]) == (ACC, order["id"], 18_900)
    # Paid already: neither the balance nor a crypto intent can pay it again.
    assert code_of(payments.pay_with_balance, ACC, order["id"]) == "invalid_state"
    assert payments.get_balance(ACC)["available_usd_cents"] == 50_000 - 18_900


def test_another_accounts_order_cannot_be_paid_from_my_balance(payments_ready, payments, watcher, new_order):
    settle_topup(payments, watcher, 50_000)
    theirs = new_order("acc2")

    assert code_of(payments.pay_with_balance, ACC, theirs["id"]) == "not_found"
    assert payments.get_balance(ACC)["available_usd_cents"] == 50_000


def test_fifty_orders_racing_for_one_balance_pay_exactly_one(
    payments_ready, payments, orders, watcher, new_order, configs, payments_db
):
    settle_topup(payments, watcher, 200_000)
    settle_topup(payments, watcher, 10_000)
    assert payments.get_balance(ACC)["available_usd_cents"] == 210_000
    racing = [new_order(ACC, "h100", 7, 5) for _ in range(50)]  # 5 lots x 420 USD: the whole balance each
    assert {o["summary"]["total_usd_cents"] for o in racing} == {210_000}

    results = concurrently(configs["payments"], "payments", "pay_with_balance", [(ACC, o["id"]) for o in racing])

    winners = [(order, result) for order, result in zip(racing, results, strict=True) if isinstance(result, dict)]
    assert len(winners) == 1
    assert sorted(r for r in results if not isinstance(r, dict)) == ["insufficient_balance"] * 49
    [(winner, paid)] = winners
    assert paid["amount_usd_cents"] == 210_000
    assert payments.get_balance(ACC) == {"available_usd_cents": 0, "pending_usd_cents": 0}
    debits = [e for e in payments.list_ledger(ACC)["items"] if e["amount_usd_cents"] < 0]
    assert [(e["amount_usd_cents"], e["ref"]) for e in debits] == [(-210_000, winner["id"])]
    wait_paid(orders, winner["id"])
    others = [o["id"] for o in racing if o["id"] != winner["id"]]
    assert {orders.get_order(ACC, order_id)["status"] for order_id in others} == {"awaiting_payment"}
    with payments_db.session() as session:
        assert_invariant(session)
