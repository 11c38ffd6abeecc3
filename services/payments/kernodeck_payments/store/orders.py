"""Payments' copy of the orders, written from orders' events."""

from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from kernodeck_contracts.events import OrderCreated, OrderStatusChanged
from kernodeck_contracts.statuses import OrderStatus
from kernodeck_kit.db import insert_for
from kernodeck_payments.domain.orders import PayableOrder
from kernodeck_payments.store.tables import PayableOrderRow


def _remember(dialect):
    """A new order, or what its creation says written onto the status that arrived before it."""
    statement = dialect.insert(PayableOrderRow.__table__)  # the table's: an order without a deadline writes NULL
    created = ("total_usd_cents", "expires_at", "model_id", "total_gpus", "ssh_key_given")
    return statement.on_conflict_do_update(
        index_elements=["order_id"], set_={name: statement.excluded[name] for name in created}
    )


_REMEMBER = {"postgresql": _remember(postgresql), "sqlite": _remember(sqlite)}  # built once: every order's


def remember_order(session: Session, event: OrderCreated) -> None:
    """A new order, awaiting payment; a status that arrived before it is kept."""
    values = {
        "order_id": event.order_id,
        "account_id": event.account_id,
        "status": OrderStatus.AWAITING_PAYMENT,
        "status_at": event.occurred_at,
        "total_usd_cents": event.total_usd_cents,
        "expires_at": event.expires_at,
        "model_id": event.model_id,
        "total_gpus": event.total_gpus,
        "ssh_key_given": event.ssh_public_key is not None,
    }
    session.execute(_REMEMBER[session.get_bind().dialect.name], values)


def record_order_statuses(session: Session, events: list[OrderStatusChanged]) -> None:
    """Each order's status as of the newest of `events` about it (of two as new, the later), unless a newer one
    is recorded already: one statement, many parameter sets, applied in the order of the orders' ids."""
    if not events:
        return
    statement = insert_for(session, PayableOrderRow)
    excluded = statement.excluded
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["order_id"],
            set_={"status": excluded.status, "status_at": excluded.status_at},
            where=PayableOrderRow.status_at <= excluded.status_at,
        ),
        [
            {"order_id": e.order_id, "account_id": e.account_id, "status": e.status, "status_at": e.occurred_at}
            for e in sorted(events, key=lambda e: e.order_id)  # stable: one order's events stay in their order
        ],
    )


def payable_order(session: Session, order_id: str) -> PayableOrder | None:
    row = session.get(PayableOrderRow, order_id)
    if row is None:
        return None
    return PayableOrder(
        row.order_id,
        row.account_id,
        row.status,
        row.total_usd_cents,
        row.expires_at,
        row.model_id,
        row.total_gpus,
        row.ssh_key_given,
    )
