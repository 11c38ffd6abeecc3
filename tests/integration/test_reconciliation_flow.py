"""Reconciliation with orders: chain events on the real broker, catalog + orders + payments containers, PostgreSQL.

Every amount is exact. The order is h100 for 3 days, 1 lot: 189.00 USD; at
the rates file's 50,000 USD per BTC that is 0.00378 BTC = 378,000 satoshi,
and one satoshi is worth 0.05 cent at that rate.
"""

from datetime import timedelta

import eventlet
import pytest

from kernodeck_contracts.events import TransferConfirmations, TransferConfirmed, TransferReverted, TransferSeen
from kernodeck_kit.transport.calls import RemoteServiceError
from kernodeck_payments.store.addresses import import_solana_addresses
from kernodeck_payments.store.intents import due_for_reconciliation
from services.payments.tests.conftest import RATES
from services.payments.tests.helpers import (
    UNKNOWN_ERC20,
    USDT_ETHEREUM,
    confirm,
    finished,
    now,
    run_entrypoint,
    timeline_kinds,
    transfer_fields,
    txid,
    wait_until,
)

ACC = "acc1"
ORDER_CENTS = 18_900
BTC_AMOUNT = 378_000  # 189 USD at 50,000 USD/BTC


@pytest.fixture
def order_payment(payments_ready, new_order):
    """`order_payment(asset="BTC", network="bitcoin")` -> (order, payment) for a fresh 189 USD order of ACC."""

    def open_one(asset: str = "BTC", network: str = "bitcoin", account: str = ACC):
        order = new_order(account)
        return order, payments_ready.create_order_payment(account, order["id"], asset, network)

    return open_one


def order_status(orders, order_id, account=ACC) -> str:
    return orders.get_order(account, order_id)["status"]


def wait_paid(orders, order_id, account=ACC) -> dict:
    return wait_until(
        lambda: (o := orders.get_order(account, order_id))["status"] == "paid" and o, what="the order to be paid"
    )


def balance(payments, account=ACC) -> dict:
    return payments.get_balance(account)


def ledger(payments, account=ACC) -> list[tuple[int, str, str]]:
    """The customer's ledger as (amount, reason, ref), oldest first."""
    return [(e["amount_usd_cents"], e["reason"], e["ref"]) for e in reversed(payments.list_ledger(account)["items"])]


def refresh_rates(running, write_rates, **changes) -> None:
    write_rates({**RATES, **changes})
    assert run_entrypoint(running["payments"], "refresh_rates") == len(RATES)


# --- settling ------------------------------------------------------------


def test_an_exact_payment_goes_seen_confirming_settled_and_the_order_paid(
    order_payment, payments, orders, watcher, payments_events, payments_db
):
    order, payment = order_payment()
    assert payment["status"] == "awaiting_transfer"
    assert payment["amount_base_units"] == BTC_AMOUNT
    tx = txid()

    watcher.send(TransferSeen, **transfer_fields(payment, BTC_AMOUNT, tx=tx))
    seen = payments.get_payment(ACC, payment["id"])
    assert (seen["status"], seen["received_base_units"], seen["confirmed_base_units"]) == ("seen", BTC_AMOUNT, 0)

    watcher.send(
        TransferConfirmations, **transfer_fields(payment, BTC_AMOUNT, tx=tx, block_height=100, confirmations=1)
    )
    assert payments.get_payment(ACC, payment["id"])["status"] == "confirming"
    assert order_status(orders, order["id"]) == "awaiting_payment"

    confirm(watcher, payment, BTC_AMOUNT, tx=tx)
    settled = payments.get_payment(ACC, payment["id"])
    assert (settled["status"], settled["confirmed_base_units"]) == ("settled", BTC_AMOUNT)
    assert [(t["txid"], t["state"], t["confirmations"]) for t in settled["transfers"]] == [(tx, "confirmed", 2)]

    paid = wait_paid(orders, order["id"])
    assert timeline_kinds(paid).count("paid") == 1
    [event] = payments_events.wait_for("payment_settled", 1)
    assert (event["payment_id"], event["order_id"], event["amount_usd_cents"], event["method"]) == (
        payment["id"],
        order["id"],
        ORDER_CENTS,
        "BTC/bitcoin",
    )
    # Paid straight by crypto: nothing on the customer's balance, the sale booked once.
    assert balance(payments) == {"available_usd_cents": 0, "pending_usd_cents": 0}
    assert ledger(payments) == []
    assert payments_db.account_nets() == {"external:crypto": -ORDER_CENTS, "sales:orders": ORDER_CENTS}


def test_two_partial_payments_add_up_to_settle(order_payment, payments, orders, watcher):
    order, payment = order_payment()

    confirm(watcher, payment, 200_000)
    first = payments.get_payment(ACC, payment["id"])
    assert (first["status"], first["confirmed_base_units"]) == ("confirming", 200_000)
    assert order_status(orders, order["id"]) == "awaiting_payment"

    confirm(watcher, payment, 178_000)
    second = payments.get_payment(ACC, payment["id"])
    assert (second["status"], second["confirmed_base_units"]) == ("settled", BTC_AMOUNT)
    wait_paid(orders, order["id"])
    assert balance(payments)["available_usd_cents"] == 0
    assert ledger(payments) == []


def test_a_token_payment_counts_whatever_the_case_of_its_contract(order_payment, payments, orders, watcher):
    order, payment = order_payment("USDT", "ethereum")
    assert payment["amount_base_units"] == 189_000_000

    confirm(watcher, payment, 189_000_000, token=USDT_ETHEREUM.lower(), index=7)

    assert payments.get_payment(ACC, payment["id"])["status"] == "settled"
    wait_paid(orders, order["id"])


@pytest.mark.parametrize(("current_btc", "sat_per_cent"), [("40000", 25), ("60000", 20)], ids=["falling", "rising"])
def test_an_overpayment_settles_and_credits_the_excess_at_the_lower_of_the_locked_and_current_rates(
    order_payment, payments, orders, watcher, running, write_rates, current_btc, sat_per_cent
):
    order, payment = order_payment()
    # The market moves after the quote: the excess counts at the lower of the locked 50,000 and the new rate.
    refresh_rates(running, write_rates, BTC=current_btc)

    confirm(watcher, payment, 400_000)

    assert payments.get_payment(ACC, payment["id"])["status"] == "overpaid"
    wait_paid(orders, order["id"])
    excess = (400_000 - BTC_AMOUNT) // sat_per_cent  # 22,000 sat: 880 cents at 40,000, 1,100 at 50,000
    assert balance(payments) == {"available_usd_cents": excess, "pending_usd_cents": 0}
    assert ledger(payments) == [(excess, "overpayment", payment["id"])]


def test_a_transfer_seen_before_the_deadline_counts_even_if_it_confirms_after(
    order_payment, payments, orders, watcher, payments_db
):
    order, payment = order_payment()
    tx = txid()
    watcher.send(TransferSeen, **transfer_fields(payment, BTC_AMOUNT, tx=tx))
    payments_db.move_deadline(payment["id"], now())  # the deadline passes after it was seen

    confirm(watcher, payment, BTC_AMOUNT, tx=tx, occurred_at=now())

    assert payments.get_payment(ACC, payment["id"])["status"] == "settled"
    wait_paid(orders, order["id"])
    assert ledger(payments) == []


# --- after the deadline --------------------------------------------------


def test_an_underpayment_at_the_deadline_credits_what_arrived_and_the_order_stays_payable(
    order_payment, payments, orders, watcher, running, payments_db
):
    order, payment = order_payment()
    confirm(watcher, payment, 189_000)
    assert payments.get_payment(ACC, payment["id"])["status"] == "confirming"
    assert run_entrypoint(running["payments"], "sweep") == 0  # before the deadline nothing can change

    payments_db.move_deadline(payment["id"], now())  # the deadline passes: the partial transfer was on time
    assert run_entrypoint(running["payments"], "sweep") == 1

    assert payments.get_payment(ACC, payment["id"])["status"] == "underpaid"
    arrived = 189_000 // 20  # 9,450 cents at the locked rate
    assert balance(payments) == {"available_usd_cents": arrived, "pending_usd_cents": 0}
    assert ledger(payments) == [(arrived, "underpayment", payment["id"])]
    assert order_status(orders, order["id"]) == "awaiting_payment"

    # A second sweep finds nothing to do and credits nothing again.
    assert run_entrypoint(running["payments"], "sweep") == 0
    assert balance(payments)["available_usd_cents"] == arrived

    # The order is payable again, with new instructions: another address, the same amount asked.
    again = payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    assert again["id"] != payment["id"]
    assert again["address"] == "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g" != payment["address"]
    assert again["status"] == "awaiting_transfer"
    assert [p["id"] for p in payments.list_order_payments(ACC, order["id"])] == [again["id"], payment["id"]]


def test_an_on_time_transfer_reported_after_the_underpayment_credit_is_credited_too(
    order_payment, payments, watcher, running, payments_db
):
    _, payment = order_payment()
    confirm(watcher, payment, 189_000)
    deadline = now()
    payments_db.move_deadline(payment["id"], deadline)
    assert run_entrypoint(running["payments"], "sweep") == 1
    assert balance(payments)["available_usd_cents"] == 9_450

    # A lagging watcher reports a transfer it saw before the deadline.
    confirm(watcher, payment, 40_000, occurred_at=deadline - timedelta(minutes=1))

    assert balance(payments)["available_usd_cents"] == 9_450 + 2_000  # 40,000 sat at the locked rate
    assert ledger(payments) == [(9_450, "underpayment", payment["id"]), (2_000, "underpayment", payment["id"])]
    assert payments.get_payment(ACC, payment["id"])["status"] == "underpaid"


def test_an_intent_with_nothing_received_expires_at_the_sweep(order_payment, payments, orders, running, payments_db):
    order, payment = order_payment()
    payments_db.move_deadline(payment["id"], now() - timedelta(seconds=1))

    assert run_entrypoint(running["payments"], "sweep") == 1

    assert payments.get_payment(ACC, payment["id"])["status"] == "expired"
    assert ledger(payments) == []
    assert order_status(orders, order["id"]) == "awaiting_payment"


def test_the_sweep_takes_the_intents_reconciled_longest_ago_first(order_payment, payments_db):
    _, recent = order_payment()
    _, waiting = order_payment()
    for payment in (waiting, recent):
        payments_db.move_deadline(payment["id"], now())
    payments_db.execute(
        "UPDATE payment_intents SET updated_at = :at WHERE id = :id", at=now() - timedelta(hours=1), id=waiting["id"]
    )

    with payments_db.session() as session:
        assert due_for_reconciliation(session, now(), limit=1) == [waiting["id"]]


@pytest.mark.parametrize(
    ("current_btc", "credited"),
    [
        ("40000", 4_000),  # the current rate is lower: 100,000 sat at 40,000
        ("60000", 5_000),  # the current rate is higher: the locked 50,000 applies
    ],
    ids=["current-lower", "current-higher"],
)
def test_a_late_transfer_is_credited_at_the_lower_of_the_locked_and_current_rates(
    order_payment, payments, orders, watcher, running, write_rates, payments_db, current_btc, credited
):
    order, payment = order_payment()
    deadline = now() - timedelta(minutes=5)
    payments_db.move_deadline(payment["id"], deadline)
    refresh_rates(running, write_rates, BTC=current_btc)

    confirm(watcher, payment, 100_000, occurred_at=deadline + timedelta(seconds=30))

    assert payments.get_payment(ACC, payment["id"])["status"] == "late"
    assert balance(payments) == {"available_usd_cents": credited, "pending_usd_cents": 0}
    assert ledger(payments) == [(credited, "late_transfer", payment["id"])]
    assert order_status(orders, order["id"]) == "awaiting_payment"


def test_a_late_transfer_without_a_current_rate_goes_to_review_and_credits_nothing(
    order_payment, payments, watcher, running, write_rates, payments_db
):
    _, payment = order_payment()
    deadline = now() - timedelta(minutes=5)
    payments_db.move_deadline(payment["id"], deadline)
    # Time passed and the operator's file was not renewed: no rate is fresh any more.
    stale = now() - timedelta(hours=1)
    write_rates(RATES, as_of=stale)
    payments_db.age_rates(stale)
    run_entrypoint(running["payments"], "refresh_rates")
    assert {m["reason"] for m in payments.list_methods() if m["network"] != "solana"} == {"rate_unavailable"}

    confirm(watcher, payment, 100_000, occurred_at=deadline + timedelta(seconds=30))

    assert payments.get_payment(ACC, payment["id"])["status"] == "late"
    assert ledger(payments) == []  # nothing is guessed: an operator decides
    [item] = payments.list_reviews("open")["items"]
    assert (item["reason"], item["payment_id"], item["account_id"]) == ("no_fresh_rate", payment["id"], ACC)

    refresh_rates(running, write_rates, BTC="45000")
    assert run_entrypoint(running["payments"], "sweep") == 0  # decided: the review, not a later rate
    assert ledger(payments) == []


# --- what does not count -------------------------------------------------


@pytest.mark.parametrize(
    ("asset", "token", "amount"),
    [
        ("ETH", USDT_ETHEREUM, 189_000_000),  # USDT sent to an ETH intent's address
        ("USDT", UNKNOWN_ERC20, 189_000_000),  # a lookalike token sent to a USDT intent's address
    ],
    ids=["usdt-to-eth", "unknown-contract-to-usdt"],
)
def test_another_asset_on_the_address_goes_to_review_and_credits_nothing(
    order_payment, payments, orders, watcher, payments_db, asset, token, amount
):
    order, payment = order_payment(asset, "ethereum")
    tx = txid()

    confirm(watcher, payment, amount, tx=tx, index=3, token=token)

    view = payments.get_payment(ACC, payment["id"])
    assert (view["status"], view["received_base_units"]) == ("in_review", 0)
    assert view["transfers"] == []  # not this payment: it waits in the review queue
    recorded = payments_db.transfer("ethereum", tx, 3)
    assert (recorded["intent_id"], recorded["amount"], recorded["disposition"]) == (payment["id"], amount, "review")
    [item] = payments.list_reviews("open")["items"]
    assert (item["reason"], item["payment_id"], item["account_id"], item["transfer_key"]) == (
        "wrong_asset",
        payment["id"],
        ACC,
        f"ethereum:{tx}:3",
    )
    assert ledger(payments) == []
    assert balance(payments)["available_usd_cents"] == 0
    assert order_status(orders, order["id"]) == "awaiting_payment"


STRANGER = {"network": "bitcoin", "address": "bc1qxy2kgdygjrsqtzq2n0yrf2493p83kkfjhx0wlh"}


def test_a_transfer_to_an_address_nobody_owns_is_recorded_and_reviewed_once_confirmed(
    payments_ready, payments, watcher, payments_db
):
    tx = txid()
    watcher.send(TransferSeen, **transfer_fields(STRANGER, 123_456, tx=tx, index=1))
    assert payments.list_reviews()["items"] == []

    confirm(watcher, STRANGER, 123_456, tx=tx, index=1)
    confirm(watcher, STRANGER, 123_456, tx=tx, index=1, confirmations=3)  # one item, however often confirmed

    row = payments_db.transfer("bitcoin", tx, 1)
    assert (row["address"], row["intent_id"], row["amount"], row["state"]) == (
        STRANGER["address"],
        None,
        123_456,
        "confirmed",
    )
    [item] = payments.list_reviews("open")["items"]
    assert (item["reason"], item["payment_id"], item["account_id"], item["transfer_key"]) == (
        "unknown_address",
        None,
        None,
        f"bitcoin:{tx}:1",
    )
    assert payments_db.ledger() == []


def test_a_mempool_transfer_to_an_address_nobody_owns_that_is_dropped_is_recorded_and_not_reviewed(
    payments_ready, payments, watcher, payments_db
):
    tx = txid()
    watcher.send(TransferSeen, **transfer_fields(STRANGER, 123_456, tx=tx))
    watcher.send(TransferReverted, **transfer_fields(STRANGER, 123_456, tx=tx))

    assert payments_db.transfer("bitcoin", tx)["state"] == "reverted"
    assert payments.list_reviews()["items"] == []


def test_a_transfer_seen_before_an_intent_took_its_address_is_reviewed_once_confirmed(
    order_payment, payments, watcher, payments_db
):
    pool_address = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
    with payments_db.session() as session:
        import_solana_addresses(session, [pool_address], now())
        session.commit()
    tx = txid()
    watcher.send(TransferSeen, **transfer_fields({"network": "solana", "address": pool_address}, 10**9, tx=tx))
    _, payment = order_payment("SOL", "solana")
    assert payment["address"] == pool_address

    confirm(watcher, payment, 10**9, tx=tx)

    assert payments_db.transfer("solana", tx)["intent_id"] is None  # not this payment's
    [item] = payments.list_reviews("open")["items"]
    assert (item["reason"], item["transfer_key"]) == ("unknown_address", f"solana:{tx}:0")


def test_a_transfer_reverted_before_settlement_stops_counting(order_payment, payments, orders, watcher):
    order, payment = order_payment()
    tx = txid()
    watcher.send(TransferSeen, **transfer_fields(payment, BTC_AMOUNT, tx=tx))
    assert payments.get_payment(ACC, payment["id"])["status"] == "seen"

    watcher.send(TransferReverted, **transfer_fields(payment, BTC_AMOUNT, tx=tx))

    view = payments.get_payment(ACC, payment["id"])
    assert (view["status"], view["received_base_units"], view["confirmed_base_units"]) == ("awaiting_transfer", 0, 0)
    assert [t["state"] for t in view["transfers"]] == ["reverted"]
    assert payments.list_reviews()["items"] == []
    assert order_status(orders, order["id"]) == "awaiting_payment"

    # The intent still takes the payment that replaces it.
    confirm(watcher, payment, BTC_AMOUNT)
    assert payments.get_payment(ACC, payment["id"])["status"] == "settled"
    wait_paid(orders, order["id"])


def test_a_transfer_reverted_after_settlement_goes_to_review_and_the_order_stays_paid(
    order_payment, payments, orders, watcher
):
    order, payment = order_payment()
    tx = txid()
    confirm(watcher, payment, BTC_AMOUNT, tx=tx)
    wait_paid(orders, order["id"])

    watcher.send(TransferReverted, **transfer_fields(payment, BTC_AMOUNT, tx=tx, block_height=100))

    [item] = payments.list_reviews("open")["items"]
    assert (item["reason"], item["payment_id"], item["account_id"], item["transfer_key"]) == (
        "reverted_after_settlement",
        payment["id"],
        ACC,
        f"bitcoin:{tx}:0",
    )
    assert payments.get_payment(ACC, payment["id"])["status"] == "settled"
    assert order_status(orders, order["id"]) == "paid"
    assert ledger(payments) == []


def test_a_second_transfer_after_settlement_is_credited_to_the_balance(order_payment, payments, orders, watcher):
    order, payment = order_payment()
    confirm(watcher, payment, BTC_AMOUNT)
    wait_paid(orders, order["id"])

    confirm(watcher, payment, 100_000)

    assert balance(payments)["available_usd_cents"] == 5_000  # 100,000 sat at the lower of 50,000 and 50,000
    assert ledger(payments) == [(5_000, "overpayment", payment["id"])]
    assert payments.get_payment(ACC, payment["id"])["status"] == "settled"
    assert timeline_kinds(orders.get_order(ACC, order["id"])).count("paid") == 1


# --- delivery: duplicates, order, thresholds -----------------------------


def test_the_same_event_delivered_twice_has_one_effect(order_payment, payments, orders, watcher, payments_events):
    order, payment = order_payment()
    event = confirm(watcher, payment, 400_000)
    wait_paid(orders, order["id"])
    payments_events.wait_for("payment_settled", 1)

    watcher.deliver(event)  # the broker redelivers it: the same event id
    watcher.deliver(event.model_copy(update={"event_id": "replayed-by-a-restarted-watcher"}))  # same sequence

    assert ledger(payments) == [(1_100, "overpayment", payment["id"])]
    assert balance(payments)["available_usd_cents"] == 1_100
    assert len(payments_events.of("payment_settled")) == 1
    assert len(payments_events.of("balance_credited")) == 1
    assert timeline_kinds(orders.get_order(ACC, order["id"])).count("paid") == 1


def test_an_older_event_arriving_after_a_newer_one_is_ignored(order_payment, payments, orders, watcher):
    order, payment = order_payment()
    tx = txid()

    confirm(watcher, payment, BTC_AMOUNT, tx=tx, sequence=5)
    watcher.send(TransferSeen, **transfer_fields(payment, BTC_AMOUNT, tx=tx, sequence=3))

    view = payments.get_payment(ACC, payment["id"])
    assert view["status"] == "settled"
    assert [(t["state"], t["confirmations"]) for t in view["transfers"]] == [("confirmed", 2)]
    wait_paid(orders, order["id"])


def test_a_confirmed_event_below_the_required_confirmations_is_still_confirming(
    order_payment, payments, orders, watcher
):
    order, payment = order_payment()
    tx = txid()

    confirm(watcher, payment, BTC_AMOUNT, tx=tx, confirmations=1)  # bitcoin needs 2

    view = payments.get_payment(ACC, payment["id"])
    assert (view["status"], view["confirmed_base_units"]) == ("confirming", 0)
    assert [t["state"] for t in view["transfers"]] == ["confirming"]
    assert order_status(orders, order["id"]) == "awaiting_payment"

    confirm(watcher, payment, BTC_AMOUNT, tx=tx, confirmations=2)
    assert payments.get_payment(ACC, payment["id"])["status"] == "settled"
    wait_paid(orders, order["id"])


# --- top-ups and refused payments ----------------------------------------


def test_a_settled_topup_credits_exactly_its_amount(payments_ready, payments, watcher, payments_events):
    topup = payments.create_topup(ACC, 50_000, "LTC", "litecoin")
    payment = topup["payment"]
    assert (topup["status"], payment["amount_base_units"]) == ("awaiting_transfer", 500_000_000)  # 500 USD at 100
    assert balance(payments) == {"available_usd_cents": 0, "pending_usd_cents": 50_000}
    tx = txid()

    watcher.send(TransferSeen, **transfer_fields(payment, 500_000_000, tx=tx))
    assert balance(payments) == {"available_usd_cents": 0, "pending_usd_cents": 50_000}

    confirm(watcher, payment, 500_000_000, tx=tx)

    assert balance(payments) == {"available_usd_cents": 50_000, "pending_usd_cents": 0}
    assert ledger(payments) == [(50_000, "topup", payment["id"])]
    [listed] = payments.list_topups(ACC)["items"]
    assert (listed["id"], listed["status"], listed["payment"]["status"]) == (topup["id"], "credited", "settled")
    assert listed["credited_usd_cents"] == 50_000
    [credited] = payments_events.wait_for("balance_credited", 1)
    assert (credited["account_id"], credited["amount_usd_cents"], credited["reason"]) == (ACC, 50_000, "topup")
    assert payments_events.of("payment_settled") == []  # a top-up is not an order payment


@pytest.mark.parametrize(("ltc_now", "cents"), [("100", 50_000), ("99.99", 49_995)], ids=["held", "fell"])
def test_a_topup_is_credited_at_the_lower_of_its_locked_and_the_current_rate(
    payments_ready, payments, watcher, running, write_rates, ltc_now, cents
):
    topup = payments.create_topup(ACC, 50_000, "LTC", "litecoin")
    assert (topup["payment"]["rate"], topup["credited_usd_cents"]) == ("100", None)  # 5 LTC for 500 USD, locked
    refresh_rates(running, write_rates, LTC=ltc_now)
    confirm(watcher, topup["payment"], 500_000_000)
    assert balance(payments) == {"available_usd_cents": cents, "pending_usd_cents": 0}
    [listed] = payments.list_topups(ACC)["items"]
    assert (listed["status"], listed["credited_usd_cents"]) == ("credited", cents)


def test_a_second_settled_intent_of_a_paid_order_is_credited_back_and_the_order_paid_once(
    order_payment, payments, orders, watcher, new_order
):
    order, by_btc = order_payment()
    by_ltc = payments.create_order_payment(ACC, order["id"], "LTC", "litecoin")
    assert by_ltc["amount_base_units"] == 189_000_000  # 1.89 LTC at 100

    confirm(watcher, by_btc, BTC_AMOUNT)
    wait_paid(orders, order["id"])
    confirm(watcher, by_ltc, 189_000_000)

    wait_until(lambda: ledger(payments), what="the refused payment's credit")
    assert ledger(payments) == [(ORDER_CENTS, "refused_payment", by_ltc["id"])]
    assert balance(payments)["available_usd_cents"] == ORDER_CENTS
    assert timeline_kinds(orders.get_order(ACC, order["id"])).count("paid") == 1


def test_two_payments_settling_at_once_for_one_order_pay_it_once_and_credit_the_other(
    payments_ready, payments, orders, watcher, new_order
):
    """Two settlements racing for one order: orders applies one and refuses the other, never drops it.

    Two PaymentSettled events for one order, handled by two orders workers at the same
    time, both read the order awaiting payment; the one that loses the race must still
    answer with PaymentRefused, so that the second payment comes back to the balance.
    """
    pairs = []
    for _ in range(5):  # ten open payments: the account's limit
        order = new_order(ACC)
        pairs.append(
            (
                order,
                payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin"),
                payments.create_order_payment(ACC, order["id"], "LTC", "litecoin"),
            )
        )
    events = []
    for _, by_btc, by_ltc in pairs:
        events.append(
            watcher.event(TransferConfirmed, **transfer_fields(by_btc, BTC_AMOUNT, block_height=100, confirmations=2))
        )
        events.append(
            watcher.event(TransferConfirmed, **transfer_fields(by_ltc, 189_000_000, block_height=100, confirmations=6))
        )

    watcher.deliver_all(events)

    for order, _, _ in pairs:
        assert timeline_kinds(wait_paid(orders, order["id"])).count("paid") == 1
    wait_until(
        lambda: balance(payments)["available_usd_cents"] == len(pairs) * ORDER_CENTS,
        seconds=5,
        what="every second payment to come back to the balance",
    )
    assert sorted(reason for _, reason, _ in ledger(payments)) == ["refused_payment"] * len(pairs)


def test_crypto_and_balance_racing_for_one_order_pay_it_once(order_payment, payments, orders, watcher):
    """Whichever wins, the order is paid once and the balance ends where it started.

    When both settle, orders refuses the one that came second, even when it handles the
    two PaymentSettled at the same moment, and its amount comes back to the balance.
    """
    topup = payments.create_topup(ACC, 50_000, "BTC", "bitcoin")
    confirm(watcher, topup["payment"], 1_000_000)  # 500 USD at 50,000
    assert balance(payments)["available_usd_cents"] == 50_000
    order, payment = order_payment()

    by_balance = eventlet.spawn(payments.pay_with_balance, ACC, order["id"])
    confirm(watcher, payment, BTC_AMOUNT)
    try:
        by_balance.wait()
        balance_paid = True
    except RemoteServiceError as error:
        assert error.code == "invalid_state"  # the crypto payment made the order paid first
        balance_paid = False

    wait_paid(orders, order["id"])
    if balance_paid:  # both settled: orders refused one, and its amount came back
        wait_until(
            lambda: any(reason == "refused_payment" for _, reason, _ in ledger(payments)), seconds=5, what="the refund"
        )
    assert balance(payments)["available_usd_cents"] == 50_000
    assert timeline_kinds(orders.get_order(ACC, order["id"])).count("paid") == 1


def test_a_refused_payment_is_booked_once_in_sales_and_once_as_crypto_received(
    order_payment, payments, orders, watcher, payments_db
):
    """A refused payment is booked once: the refund takes back from sales what its settlement put there.

    The second intent's settlement books external:crypto -> sales:orders; the refusal
    moves that amount from sales:orders back to the customer, so sales:orders holds one
    payment for an order paid once and external:crypto what actually arrived.
    """
    order, by_btc = order_payment()
    by_ltc = payments.create_order_payment(ACC, order["id"], "LTC", "litecoin")
    confirm(watcher, by_btc, BTC_AMOUNT)
    wait_paid(orders, order["id"])
    confirm(watcher, by_ltc, 189_000_000)
    wait_until(lambda: ledger(payments), what="the refused payment's credit")

    assert payments_db.account_nets() == {
        "external:crypto": -2 * ORDER_CENTS,  # two transfers of 189 USD arrived
        "sales:orders": ORDER_CENTS,  # one order, paid once
        f"customer:{ACC}": ORDER_CENTS,  # the second payment, back on the balance
    }


def test_a_crypto_payment_refused_after_a_balance_payment_is_booked_once(
    order_payment, payments, orders, watcher, payments_db
):
    """The same when the balance paid the order first: the refund comes out of sales, not out of crypto again.

    pay_with_balance books customer -> sales:orders; the crypto intent that settles next
    is booked external:crypto -> sales:orders, orders refuses it, and the refund is
    sales:orders -> customer.
    """
    topup = payments.create_topup(ACC, 50_000, "BTC", "bitcoin")
    confirm(watcher, topup["payment"], 1_000_000)  # 500 USD at 50,000
    order, payment = order_payment()
    payments.pay_with_balance(ACC, order["id"])
    wait_paid(orders, order["id"])
    confirm(watcher, payment, BTC_AMOUNT)
    wait_until(lambda: any(reason == "refused_payment" for _, reason, _ in ledger(payments)), what="the refund")
    assert balance(payments)["available_usd_cents"] == 50_000

    assert payments_db.account_nets() == {
        "external:crypto": -50_000 - ORDER_CENTS,  # the top-up's transfer and the order's transfer
        "sales:orders": ORDER_CENTS,  # one order, paid once
        f"customer:{ACC}": 50_000,
    }


def test_orders_notes_i_have_paid_once_however_often_it_is_pressed_and_the_order_does_not_move(
    order_payment, payments, orders
):
    order, payment = order_payment("BTC", "bitcoin")
    handled = finished("on_payment_reported", "orders")
    for _ in range(50):
        payments.report_payment(ACC, payment["id"])

    seen = wait_until(
        lambda: (o := orders.get_order(ACC, order["id"])) and "payment_reported" in timeline_kinds(o) and o,
        what="the timeline note",
    )
    assert timeline_kinds(seen).count("payment_reported") == 1
    assert finished("on_payment_reported", "orders") == handled + 1  # one event reached orders, not fifty
    assert seen["status"] == "awaiting_payment"
