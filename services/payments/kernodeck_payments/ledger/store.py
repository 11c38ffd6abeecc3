"""Ledger tables and the statements that move money.

Every function works inside the caller's session; the caller commits. The
tables are append-only for entries: nothing here updates or deletes one.
Correct under concurrent workers on PostgreSQL (row locks and unique-index
waits do the serialising, no read-then-write) and on SQLite (one writer).
"""

from collections import defaultdict
from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, Index, func, update
from sqlmodel import Column, Field, Session, SQLModel, select

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.db import insert_for
from kernodeck_kit.paging import Page
from kernodeck_kit.types import UtcDateTime
from kernodeck_payments.ledger import domain
from kernodeck_payments.ledger.domain import Entry, Reason


class LedgerEntryRow(SQLModel, table=True):
    __tablename__ = "ledger_entries"
    __table_args__ = (
        CheckConstraint("amount_cents > 0", name="ck_ledger_entries_amount_positive"),
        Index("ix_ledger_entries_customer_id_id", "customer_id", "id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    idempotency_key: str = Field(max_length=domain.KEY_MAX, unique=True)
    debit_account: str = Field(max_length=domain.ACCOUNT_MAX)
    credit_account: str = Field(max_length=domain.ACCOUNT_MAX)
    amount_cents: int = Field(sa_column=Column(BigInteger(), nullable=False))
    reason: str = Field(max_length=32)
    ref: str = Field(max_length=domain.REF_MAX)
    customer_id: str | None = Field(default=None, max_length=domain.CUSTOMER_ID_MAX)
    created_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class BalanceRow(SQLModel, table=True):
    __tablename__ = "balances"
    __table_args__ = (CheckConstraint("available_cents >= 0", name="ck_balances_available_not_negative"),)

    customer_id: str = Field(primary_key=True, max_length=domain.CUSTOMER_ID_MAX)
    available_cents: int = Field(sa_column=Column(BigInteger(), nullable=False))
    updated_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


def credit_customer(
    session: Session, customer_id: str, amount_cents: int, reason: Reason, idempotency_key: str, ref: str, at: datetime
) -> bool:
    """Credit the customer's available balance; False (nothing changed) when the key was used already."""
    return _credit(session, domain.customer_credit(customer_id, amount_cents, reason, idempotency_key, ref, at))


def refund_refused_payment(
    session: Session, customer_id: str, amount_cents: int, payment_id: str, idempotency_key: str, at: datetime
) -> bool:
    """Give back a payment its order refused, out of the sales it was booked into; False when done already."""
    return _credit(session, domain.refused_order_payment(customer_id, amount_cents, payment_id, idempotency_key, at))


def _credit(session: Session, entry: Entry) -> bool:
    if not _append(session, entry):
        return False
    balances = insert_for(session, BalanceRow).values(
        customer_id=entry.customer_id, available_cents=entry.amount_cents, updated_at=entry.at
    )
    session.execute(
        balances.on_conflict_do_update(
            index_elements=["customer_id"],
            set_={
                "available_cents": BalanceRow.available_cents + balances.excluded.available_cents,
                "updated_at": balances.excluded.updated_at,
            },
        )
    )
    return True


def debit_customer_for_order(
    session: Session, customer_id: str, amount_cents: int, order_id: str, idempotency_key: str, at: datetime
) -> bool:
    """Pay an order from the balance; False when this key was paid already.

    Raises INSUFFICIENT_BALANCE, leaving no trace, when the balance is short.
    The entry goes in first: a concurrent duplicate waits on its unique key
    and then finds it taken, so it never reaches the balance. The savepoint
    takes the entry back if the balance is short, even when the caller goes
    on to commit other work.
    """
    entry = domain.order_debit(customer_id, amount_cents, order_id, idempotency_key, at)
    with session.begin_nested():
        if not _append(session, entry):
            return False
        debited = session.execute(
            update(BalanceRow)
            .where(BalanceRow.customer_id == customer_id, BalanceRow.available_cents >= amount_cents)
            .values(available_cents=BalanceRow.available_cents - amount_cents, updated_at=entry.at)
        ).rowcount
        if debited != 1:
            raise ServiceError(ErrorCode.INSUFFICIENT_BALANCE, "the available balance does not cover the order")
    return True


def record_order_payment(
    session: Session, amount_cents: int, order_id: str, idempotency_key: str, at: datetime
) -> bool:
    """Book an order paid straight by crypto; no balance moves. False when the key was used already."""
    return _append(session, domain.crypto_order_payment(amount_cents, order_id, idempotency_key, at))


def record_order_payments(session: Session, payments: list[tuple[int, str, str, datetime]]) -> None:
    """record_order_payment for each of `payments` (amount_cents, order_id, idempotency_key, at), in one
    statement, in their order."""
    _append_many(session, [domain.crypto_order_payment(*payment) for payment in payments])


def paid_for_order(session: Session, order_id: str, payment_ids: list[str]) -> int:
    """What the order's payments put into sales, less what was given back already (refused payments among
    `payment_ids`, and earlier refunds of the order itself)."""
    into = session.exec(
        select(func.coalesce(func.sum(LedgerEntryRow.amount_cents), 0)).where(
            LedgerEntryRow.credit_account == domain.SALES_ORDERS, LedgerEntryRow.ref == order_id
        )
    ).one()
    back = session.exec(
        select(func.coalesce(func.sum(LedgerEntryRow.amount_cents), 0)).where(
            LedgerEntryRow.debit_account == domain.SALES_ORDERS, LedgerEntryRow.ref.in_([order_id, *payment_ids])
        )
    ).one()
    return int(into - back)  # PostgreSQL sums BIGINT as NUMERIC


def order_bookings(session: Session, order_id: str) -> list[tuple[str, int]]:
    """(payment id, cents) of each payment booked into sales for the order, in the order they were booked."""
    rows = session.exec(
        select(LedgerEntryRow.idempotency_key, LedgerEntryRow.amount_cents)
        .where(LedgerEntryRow.credit_account == domain.SALES_ORDERS, LedgerEntryRow.ref == order_id)
        .order_by(LedgerEntryRow.id)
    ).all()
    return [(domain.booked_payment(key, order_id), cents) for key, cents in rows]


def booked_under(session: Session, keys: list[str]) -> dict[str, int]:
    """The cents of the entries booked under those of `keys` that were used, by key."""
    found = session.exec(
        select(LedgerEntryRow.idempotency_key, LedgerEntryRow.amount_cents).where(
            LedgerEntryRow.idempotency_key.in_(keys)
        )
    )
    return dict(found.all())


def available_cents(session: Session, customer_id: str) -> int:
    # A column query, not session.get: the identity map would not see this session's own UPDATEs.
    balance = session.exec(select(BalanceRow.available_cents).where(BalanceRow.customer_id == customer_id)).first()
    return balance or 0


def list_entries(session: Session, customer_id: str, page: Page) -> list[dict]:
    """A page of the customer's entries, newest first (one more than its limit when there is more);
    `amount_cents` is + for a credit, - for a debit."""
    account = domain.customer_account(customer_id)
    query = select(LedgerEntryRow).where(LedgerEntryRow.customer_id == customer_id)
    rows = session.exec(page.select(query, LedgerEntryRow.id)).all()
    return [
        {
            "id": row.id,
            "amount_cents": row.amount_cents if row.credit_account == account else -row.amount_cents,
            "reason": row.reason,
            "ref": row.ref,
            "at": row.created_at,
        }
        for row in rows
    ]


def ledger_invariant_holds(session: Session) -> bool:
    return not _invariant_violations(session)


def assert_invariant(session: Session) -> None:
    violations = _invariant_violations(session)
    if violations:
        raise AssertionError("ledger invariant broken: " + "; ".join(violations))


def _invariant_violations(session: Session) -> list[str]:
    net: dict[str, int] = defaultdict(int)
    for column, sign in ((LedgerEntryRow.credit_account, 1), (LedgerEntryRow.debit_account, -1)):
        totals = session.exec(select(column, func.sum(LedgerEntryRow.amount_cents)).group_by(column))
        for account, total in totals:
            net[account] += sign * total
    total = sum(net.values())
    violations = [f"accounts sum to {total} cents, not 0"] if total else []
    balances = dict(session.exec(select(BalanceRow.customer_id, BalanceRow.available_cents)).all())
    customers = set(balances) | {customer for customer in map(domain.customer_of, net) if customer}
    for customer_id in sorted(customers):
        booked, held = net.get(domain.customer_account(customer_id), 0), balances.get(customer_id, 0)
        if held != booked:
            violations.append(f"{customer_id}: balance {held} != entries {booked}")
    return violations


def _append(session: Session, entry: Entry) -> bool:
    """Insert the entry unless its idempotency key exists; True when it was inserted."""
    return _append_many(session, [entry]) == 1


def _append_many(session: Session, entries: list[Entry]) -> int:
    """Insert each entry unless its idempotency key exists, in their order; how many were inserted."""
    if not entries:
        return 0
    rows = [
        {
            "idempotency_key": entry.idempotency_key,
            "debit_account": entry.debit_account,
            "credit_account": entry.credit_account,
            "amount_cents": entry.amount_cents,
            "reason": entry.reason.value,
            "ref": entry.ref,
            "customer_id": entry.customer_id,
            "created_at": entry.at,
        }
        for entry in entries
    ]
    # One statement for many parameter sets (compiled once, sent in pages), and RETURNING to count them, as the
    # driver's rowcount does not add up the pages.
    statement = insert_for(session, LedgerEntryRow).on_conflict_do_nothing(index_elements=["idempotency_key"])
    return len(session.execute(statement.returning(LedgerEntryRow.id), rows).all())
