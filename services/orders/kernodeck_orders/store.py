"""Order tables and the queries the service needs."""

from datetime import datetime

from sqlalchemy import JSON, Index, and_, bindparam, insert, or_, update
from sqlmodel import Column, Field, Session, SQLModel, func, select

from kernodeck_contracts.rpc import OrderSummary
from kernodeck_contracts.statuses import PaymentStatus
from kernodeck_contracts.timeline import Said, TimelineCode
from kernodeck_kit.db import is_postgres
from kernodeck_kit.outbox import Tx
from kernodeck_kit.paging import Page
from kernodeck_kit.rows import copy_as, values_of
from kernodeck_kit.types import UtcDateTime
from kernodeck_kit.units import SqlUnit
from kernodeck_orders.domain import (
    IN_FLIGHT,
    Order,
    OrderStatus,
    PaymentInFlight,
    RentalDates,
    StaleOrder,
    TimelineEntry,
)


class OrderRow(SQLModel, table=True):
    __tablename__ = "orders"
    __table_args__ = (
        Index("ix_orders_account_id_created_at", "account_id", "created_at"),
        Index("ix_orders_status_created_at", "status", "created_at"),
    )

    id: str = Field(primary_key=True, max_length=32)
    account_id: str = Field(max_length=64)
    status: str = Field(max_length=32)
    model: str = Field(max_length=32)
    model_name: str
    backend: str = Field(max_length=8)
    duration_days: int
    lots: int
    gpus_per_lot: int
    total_gpus: int
    preparation: str = Field(max_length=32)
    lot_price_usd_cents: int
    total_usd_cents: int
    created_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    updated_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    # Bumped by every status change, which applies only to the version it read.
    version: int = 0
    ssh_public_key: str | None = None
    preparation_note: str | None = None
    delivered_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    starts_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    ends_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))


class TimelineRow(SQLModel, table=True):
    __tablename__ = "order_timeline"

    id: int | None = Field(default=None, primary_key=True)
    order_id: str = Field(foreign_key="orders.id", index=True, max_length=32)
    at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    kind: str = Field(max_length=32)
    code: str = Field(max_length=40)
    params: dict = Field(default_factory=dict, sa_column=Column(JSON(), nullable=False))


class PaymentInFlightRow(SQLModel, table=True):
    """An order's crypto payment as payments tells it (instructions, then each status)."""

    __tablename__ = "payments_in_flight"

    payment_id: str = Field(primary_key=True, max_length=32)
    order_id: str = Field(max_length=32, index=True)
    status: str = Field(max_length=20)
    status_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    expires_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))


# The statements of every order recorded and every payment followed, built once: building a statement (its
# clauses, its cache key) costs about as much as running it.
_ADD_ORDER = insert(OrderRow.__table__)
_ADD_TIMELINE = insert(TimelineRow.__table__)
_LOCK_ACCOUNT = select(func.pg_advisory_xact_lock(func.hashtext(bindparam("key"))))
_UNPAID_COUNT = select(func.count()).where(
    OrderRow.account_id == bindparam("account_id"), OrderRow.status == OrderStatus.AWAITING_PAYMENT.value
)
_CREATED_SINCE = (
    select(OrderRow.created_at)
    .where(OrderRow.account_id == bindparam("account_id"), OrderRow.created_at > bindparam("since"))
    .order_by(OrderRow.created_at)
)
_TRACKED = (
    select(PaymentInFlightRow)
    .where(PaymentInFlightRow.payment_id.in_(bindparam("payment_ids", expanding=True)))
    .order_by(PaymentInFlightRow.payment_id)
)
_TRACKED_LOCKED = _TRACKED.with_for_update()
_ADD_TRACKED = insert(PaymentInFlightRow.__table__)


def track_payments(session: Session, payments: list[PaymentInFlight]) -> None:
    """Keep each payment's newest status (and its deadline once known), whatever order the events came in: their
    rows read in one query, locked in the order of their ids on PostgreSQL."""
    query = _TRACKED_LOCKED if is_postgres(session.get_bind()) else _TRACKED
    payment_ids = sorted({payment.payment_id for payment in payments})
    rows = {row.payment_id: row for row in session.exec(query, params={"payment_ids": payment_ids})}
    new = {}  # those first heard of now: inserted together, by a plain statement
    for payment in payments:
        row = rows.get(payment.payment_id)
        if row is None:
            row = rows[payment.payment_id] = new[payment.payment_id] = PaymentInFlightRow(
                payment_id=payment.payment_id, order_id=payment.order_id, status=payment.status, status_at=payment.at
            )
        elif payment.at >= row.status_at:
            row.status, row.status_at = payment.status, payment.at
        row.expires_at = payment.expires_at or row.expires_at
    if new:
        session.execute(_ADD_TRACKED, [values_of(row, PaymentInFlightRow) for row in new.values()])


def _in_flight(now: datetime):
    """The orders with a payment that can still arrive: a transfer seen or confirming, or instructions standing."""
    return select(PaymentInFlightRow.order_id).where(
        or_(
            PaymentInFlightRow.status.in_(IN_FLIGHT),
            and_(PaymentInFlightRow.status == PaymentStatus.AWAITING_TRANSFER, PaymentInFlightRow.expires_at > now),
        )
    )


def payment_in_flight(session: Session, order_id: str, now: datetime) -> bool:
    return session.exec(_in_flight(now).where(PaymentInFlightRow.order_id == order_id).limit(1)).first() is not None


def add_order(session: Session, order: Order) -> None:
    """A new order and its timeline, as two inserts: nothing of them is read back in the transaction."""
    values = {
        "id": order.id,
        "account_id": order.account_id,
        "status": order.status.value,
        "created_at": order.created_at,
        "updated_at": order.updated_at,
        "version": order.version,
        "ssh_public_key": order.ssh_public_key,
        "preparation_note": order.preparation_note,
        **order.summary.model_dump(),
    }
    session.execute(_ADD_ORDER, values)
    timeline = [
        {"order_id": order.id, "at": e.at, "kind": e.kind, "code": e.said.code.value, "params": e.said.params}
        for e in order.timeline
    ]
    if timeline:
        session.execute(_ADD_TIMELINE, timeline)


def get_order(session: Session, order_id: str) -> Order | None:
    # Read again even when the session holds the row: a transition earlier in the unit changed it in SQL.
    row = session.get(OrderRow, order_id, populate_existing=True)
    return None if row is None else _order(row, _timelines(session, [order_id])[order_id])


def lock_orders(session: Session, order_ids: list[str]) -> dict[str, tuple[OrderRow, Order]]:
    """The orders found of `order_ids`, their rows locked until the transaction ends (in the order of their ids,
    on PostgreSQL; SQLite's transactions take the whole database), with their timelines: two queries."""
    query = select(OrderRow).where(OrderRow.id.in_(order_ids)).order_by(OrderRow.id)
    if is_postgres(session.get_bind()):
        query = query.with_for_update()
    rows = session.exec(query).all()
    timelines = _timelines(session, [row.id for row in rows])
    return {row.id: (row, _order(row, timelines[row.id])) for row in rows}


def save_locked_transition(session: Session, row: OrderRow, order: Order, entry: TimelineEntry) -> None:
    """save_transition for an order whose row this transaction locked: written with the transaction's other
    changes at its flush, many orders' in a few statements."""
    if row.version != order.version:
        raise StaleOrder(order.id)
    row.status, row.updated_at, row.version = order.status.value, order.updated_at, order.version + 1
    order.version += 1
    session.add(_timeline_row(order.id, entry))


def list_orders(session: Session, account_id: str, page: Page) -> list[Order]:
    """One page of the account's orders, newest first (one more than the page's limit, when there is more)."""
    query = select(OrderRow).where(OrderRow.account_id == account_id)
    rows = session.exec(page.select(query, OrderRow.created_at, OrderRow.id)).all()
    timelines = _timelines(session, [row.id for row in rows])
    return [_order(row, timelines[row.id]) for row in rows]


def save_transition(session: Session, order: Order, entry: TimelineEntry) -> None:
    """Record a status change made on `order`; raises StaleOrder if the row moved since it was read."""
    changed = session.execute(
        update(OrderRow)
        .where(OrderRow.id == order.id, OrderRow.version == order.version)
        .values(status=order.status.value, updated_at=order.updated_at, version=order.version + 1)
    ).rowcount
    if changed != 1:
        raise StaleOrder(order.id)
    order.version += 1
    session.add(_timeline_row(order.id, entry))


def save_rental(session: Session, order: Order) -> None:
    """Record the rental's dates as provisioning reported them."""
    rental = order.rental
    session.execute(
        update(OrderRow)
        .where(OrderRow.id == order.id)
        .values(delivered_at=rental.delivered_at, starts_at=rental.starts_at, ends_at=rental.ends_at)
    )


def add_note(session: Session, order: Order, entry: TimelineEntry) -> None:
    session.add(_timeline_row(order.id, entry))


def unpaid_order_ids(session: Session, created_before: datetime, now: datetime, limit: int) -> list[str]:
    return list(
        session.exec(
            select(OrderRow.id)
            .where(
                OrderRow.status == OrderStatus.AWAITING_PAYMENT.value,
                OrderRow.created_at <= created_before,
                OrderRow.id.not_in(_in_flight(now)),
            )
            .order_by(OrderRow.created_at)
            .limit(limit)
        ).all()
    )


def _timelines(session: Session, order_ids: list[str]) -> dict[str, list[TimelineEntry]]:
    timelines: dict[str, list[TimelineEntry]] = {order_id: [] for order_id in order_ids}
    rows = session.exec(select(TimelineRow).where(TimelineRow.order_id.in_(order_ids)).order_by(TimelineRow.id))
    for row in rows:
        said = Said(TimelineCode(row.code), row.params)
        timelines[row.order_id].append(TimelineEntry(at=row.at, kind=row.kind, said=said))
    return timelines


def _timeline_row(order_id: str, entry: TimelineEntry) -> TimelineRow:
    said = entry.said
    return TimelineRow(order_id=order_id, at=entry.at, kind=entry.kind, code=said.code.value, params=said.params)


def _order(row: OrderRow, timeline: list[TimelineEntry]) -> Order:
    return copy_as(
        Order,
        row,
        status=OrderStatus(row.status),
        summary=copy_as(OrderSummary, row),
        timeline=timeline,
        rental=None if row.delivered_at is None else RentalDates(row.delivered_at, row.starts_at, row.ends_at),
    )


class SqlOrders(SqlUnit):
    """The orders' unit of work on one database transaction."""

    def __init__(self, tx: Tx):
        super().__init__(tx)
        self._read: dict[str, tuple[OrderRow, Order] | None] = {}  # read ahead and locked; changed in place

    def add(self, order: Order) -> None:
        add_order(self.session, order)

    def read_ahead(self, order_ids: list[str]) -> None:
        found = lock_orders(self.session, order_ids)
        self._read.update({order_id: found.get(order_id) for order_id in order_ids})

    def get(self, order_id: str) -> Order | None:
        if order_id in self._read:
            read = self._read[order_id]
            return None if read is None else read[1]
        return get_order(self.session, order_id)

    def list_for(self, account_id: str, page: Page) -> list[Order]:
        return list_orders(self.session, account_id, page)

    def save_transition(self, order: Order, entry: TimelineEntry) -> None:
        if (read := self._read.get(order.id)) is not None:
            save_locked_transition(self.session, read[0], order, entry)
        else:
            save_transition(self.session, order, entry)

    def save_rental(self, order: Order) -> None:
        save_rental(self.session, order)

    def add_note(self, order: Order, entry: TimelineEntry) -> None:
        add_note(self.session, order, entry)

    def lock_account(self, account_id: str) -> None:
        if is_postgres(self.session.get_bind()):
            self.session.execute(_LOCK_ACCOUNT, {"key": f"orders:{account_id}"})

    def unpaid_count(self, account_id: str) -> int:
        return self.session.exec(_UNPAID_COUNT, params={"account_id": account_id}).one()

    def created_since(self, account_id: str, since: datetime) -> list[datetime]:
        return list(self.session.exec(_CREATED_SINCE, params={"account_id": account_id, "since": since}).all())

    def unpaid_order_ids(self, created_before: datetime, now: datetime, limit: int) -> list[str]:
        return unpaid_order_ids(self.session, created_before, now, limit)

    def track_payments(self, payments: list[PaymentInFlight]) -> None:
        track_payments(self.session, payments)

    def payment_in_flight(self, order_id: str, now: datetime) -> bool:
        return payment_in_flight(self.session, order_id, now)
