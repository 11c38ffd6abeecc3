"""Many workers at once, each in its own session and transaction."""

from kernodeck_contracts.errors import ErrorCode
from kernodeck_kit.paging import Page
from kernodeck_payments.ledger import store
from kernodeck_payments.ledger.domain import Reason
from services.payments.tests.ledger.conftest import NOW


def test_fifty_orders_racing_for_one_balance_pay_exactly_one(race, in_tx):
    in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)

    results = race([(store.debit_customer_for_order, "c1", 10_000, f"o{n}", f"order:o{n}", NOW) for n in range(50)])

    assert results.count(True) == 1
    assert results.count(ErrorCode.INSUFFICIENT_BALANCE) == 49
    assert in_tx(store.available_cents, "c1") == 0
    assert len(in_tx(store.list_entries, "c1", Page.ask())) == 2


def test_fifty_debits_with_the_same_key_debit_once(race, in_tx):
    in_tx(store.credit_customer, "c1", 1_000_000, Reason.TOPUP, "topup:i1", "i1", NOW)

    results = race([(store.debit_customer_for_order, "c1", 2_500, "o1", "order:o1", NOW)] * 50)

    assert results.count(True) == 1
    assert results.count(False) == 49
    assert in_tx(store.available_cents, "c1") == 1_000_000 - 2_500


def test_a_hundred_credits_at_once_all_count(race, in_tx):
    results = race([(store.credit_customer, "c1", n, Reason.TOPUP, f"topup:i{n}", f"i{n}", NOW) for n in range(1, 101)])

    assert results == [True] * 100
    assert in_tx(store.available_cents, "c1") == sum(range(1, 101))
