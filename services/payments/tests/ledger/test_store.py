"""The ledger's statements on PostgreSQL and SQLite, one transaction at a time."""

import pytest
from sqlalchemy import func, update
from sqlmodel import Session, select

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.paging import Page
from kernodeck_payments.ledger import store
from kernodeck_payments.ledger.domain import Reason
from kernodeck_payments.ledger.store import BalanceRow, LedgerEntryRow
from services.payments.tests.ledger.conftest import NOW


def entry_count(session: Session) -> int:
    return session.exec(select(func.count()).select_from(LedgerEntryRow)).one()


def test_a_credit_then_a_debit_leave_the_difference(in_tx):
    assert in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    assert in_tx(store.debit_customer_for_order, "c1", 2_500, "o1", "order:o1", NOW)

    assert in_tx(store.available_cents, "c1") == 7_500
    entries = in_tx(store.list_entries, "c1", Page.ask())
    assert [(e["amount_cents"], e["reason"], e["ref"]) for e in entries] == [
        (-2_500, "order_payment", "o1"),
        (10_000, "topup", "i1"),
    ]
    assert all(e["at"].utcoffset().total_seconds() == 0 for e in entries)


def test_a_customer_never_credited_has_nothing(in_tx):
    assert in_tx(store.available_cents, "c1") == 0
    assert in_tx(store.list_entries, "c1", Page.ask()) == []


def test_a_debit_of_exactly_the_balance_empties_it(in_tx):
    in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    assert in_tx(store.debit_customer_for_order, "c1", 10_000, "o1", "order:o1", NOW)
    assert in_tx(store.available_cents, "c1") == 0


def test_one_cent_short_is_refused_and_writes_nothing_even_if_the_caller_commits(engine, in_tx):
    in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)

    with Session(engine) as session:
        with pytest.raises(ServiceError) as refused:
            store.debit_customer_for_order(session, "c1", 10_001, "o1", "order:o1", NOW)
        session.commit()

    assert refused.value.code == ErrorCode.INSUFFICIENT_BALANCE
    assert in_tx(store.available_cents, "c1") == 10_000
    assert in_tx(entry_count) == 1


def test_a_customer_with_no_balance_cannot_pay(in_tx):
    with pytest.raises(ServiceError) as refused:
        in_tx(store.debit_customer_for_order, "c1", 1, "o1", "order:o1", NOW)
    assert refused.value.code == ErrorCode.INSUFFICIENT_BALANCE
    assert in_tx(entry_count) == 0


def test_a_refused_debit_leaves_its_key_free_for_a_later_try(in_tx):
    with pytest.raises(ServiceError):
        in_tx(store.debit_customer_for_order, "c1", 5_000, "o1", "order:o1", NOW)
    in_tx(store.credit_customer, "c1", 5_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    assert in_tx(store.debit_customer_for_order, "c1", 5_000, "o1", "order:o1", NOW)


def test_a_credit_key_counts_once(in_tx):
    assert in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    assert not in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    assert not in_tx(store.credit_customer, "c1", 99_999, Reason.LATE_TRANSFER, "topup:i1", "i1", NOW)
    assert in_tx(store.available_cents, "c1") == 10_000
    assert in_tx(entry_count) == 1


def test_an_order_paid_twice_from_the_balance_is_debited_once(in_tx):
    in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    assert in_tx(store.debit_customer_for_order, "c1", 2_500, "o1", "order:o1", NOW)
    assert not in_tx(store.debit_customer_for_order, "c1", 2_500, "o1", "order:o1", NOW)
    assert in_tx(store.available_cents, "c1") == 7_500
    assert in_tx(entry_count) == 2


def test_a_replayed_debit_is_no_error_once_the_balance_is_spent(in_tx):
    in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    assert in_tx(store.debit_customer_for_order, "c1", 10_000, "o1", "order:o1", NOW)
    assert not in_tx(store.debit_customer_for_order, "c1", 10_000, "o1", "order:o1", NOW)


@pytest.mark.parametrize("amount", [0, -1, True, 1.5])
def test_bad_amounts_are_refused_and_write_nothing(in_tx, amount):
    in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    calls = [
        (store.credit_customer, "c1", amount, Reason.TOPUP, "topup:i2", "i2", NOW),
        (store.debit_customer_for_order, "c1", amount, "o1", "order:o1", NOW),
        (store.record_order_payment, amount, "o2", "order:o2", NOW),
    ]
    for fn, *args in calls:
        with pytest.raises(ServiceError) as refused:
            in_tx(fn, *args)
        assert refused.value.code == ErrorCode.VALIDATION_ERROR
    assert in_tx(store.available_cents, "c1") == 10_000
    assert in_tx(entry_count) == 1


def test_an_order_paid_by_crypto_is_booked_once_and_moves_no_balance(in_tx):
    in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    assert in_tx(store.record_order_payment, 2_500, "o1", "order:o1", NOW)
    assert not in_tx(store.record_order_payment, 2_500, "o1", "order:o1", NOW)
    assert in_tx(store.available_cents, "c1") == 10_000
    assert [e["ref"] for e in in_tx(store.list_entries, "c1", Page.ask())] == ["i1"]
    assert in_tx(entry_count) == 2


def test_a_blocks_order_payments_are_booked_in_one_statement_in_their_order_each_key_once(in_tx):
    assert in_tx(store.record_order_payment, 2_500, "o2", "order:o2", NOW)
    in_tx(store.record_order_payments, [(1_000, f"o{n}", f"order:o{n}", NOW) for n in (3, 1, 2)])
    refs = in_tx(lambda session: list(session.exec(select(LedgerEntryRow.ref).order_by(LedgerEntryRow.id))))
    assert refs == ["o2", "o3", "o1"]  # o2 was booked before: once, at its first amount
    assert in_tx(store.paid_for_order, "o2", []) == 2_500


def test_entries_come_newest_first_up_to_the_limit(in_tx):
    for n in range(1, 6):
        in_tx(store.credit_customer, "c1", n, Reason.REVIEW_CREDIT, f"review:{n}", f"r{n}", NOW)
    in_tx(store.credit_customer, "c2", 100, Reason.TOPUP, "topup:other", "i9", NOW)
    # One more than the limit: it tells the page that another follows.
    assert [e["amount_cents"] for e in in_tx(store.list_entries, "c1", Page.ask(3))] == [5, 4, 3, 2]

    def page_after(cursor):
        page = Page.ask(2, cursor, width=1)
        return page.answer(in_tx(store.list_entries, "c1", page), lambda e: (e["id"],), lambda e: e["amount_cents"])

    first = page_after(None)
    second = page_after(first["next_cursor"])
    in_tx(store.credit_customer, "c1", 6, Reason.REVIEW_CREDIT, "review:6", "r6", NOW)  # newer: shifts nothing
    last = page_after(second["next_cursor"])
    assert [first["items"], second["items"], last["items"], last["next_cursor"]] == [[5, 4], [3, 2], [1], None]


def test_the_invariant_catches_a_balance_that_drifts_from_the_entries(engine, in_tx):
    in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    assert in_tx(store.ledger_invariant_holds)

    def shift(session, cents):
        session.execute(update(BalanceRow).values(available_cents=BalanceRow.available_cents + cents))

    in_tx(shift, 1)
    assert not in_tx(store.ledger_invariant_holds)
    with pytest.raises(AssertionError, match="c1: balance 10001 != entries 10000"):
        in_tx(store.assert_invariant)
    in_tx(shift, -1)


def test_an_entry_is_booked_at_the_time_its_caller_gives(in_tx, engine):
    in_tx(store.credit_customer, "c1", 10_000, Reason.TOPUP, "topup:i1", "i1", NOW)
    with Session(engine) as session:
        assert [entry["at"] for entry in store.list_entries(session, "c1", Page.ask())] == [NOW]
