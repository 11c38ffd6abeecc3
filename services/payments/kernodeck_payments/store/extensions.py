"""Payments' copy of the confirmed extensions, written from support's events."""

from sqlalchemy import update
from sqlmodel import Session

from kernodeck_contracts.events import ExtensionConfirmed
from kernodeck_kit.db import insert_for
from kernodeck_payments.domain.extensions import PayableExtension
from kernodeck_payments.store.tables import PayableExtensionRow


def copy_extension(session: Session, event: ExtensionConfirmed) -> None:
    statement = insert_for(session, PayableExtensionRow).values(
        extension_id=event.extension_id,
        order_id=event.order_id,
        account_id=event.account_id,
        price_usd_cents=event.price_usd_cents,
        due_by=event.due_by,
        paid=False,
    )
    session.execute(statement.on_conflict_do_nothing(index_elements=["extension_id"]))


def mark_extension_paid(session: Session, extension_id: str) -> None:
    session.execute(
        update(PayableExtensionRow).where(PayableExtensionRow.extension_id == extension_id).values(paid=True)
    )


def payable_extension(session: Session, extension_id: str) -> PayableExtension | None:
    row = session.get(PayableExtensionRow, extension_id)
    if row is None:
        return None
    return PayableExtension(row.extension_id, row.order_id, row.account_id, row.price_usd_cents, row.due_by, row.paid)
