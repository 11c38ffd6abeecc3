"""Operators' decisions: the review queue and the method switches. Each one is recorded with who made it."""

from datetime import datetime

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.outbox import Store
from kernodeck_kit.paging import Page
from kernodeck_kit.units import SqlUnits
from kernodeck_payments.domain.methods import Method
from kernodeck_payments.domain.reconcile import Credit
from kernodeck_payments.ledger.domain import Reason
from kernodeck_payments.store.reviews import audit_of, get_review, list_reviews, record_decision
from kernodeck_payments.store.tables import MethodSwitch
from kernodeck_payments.use_cases.settlement import credit_balance
from kernodeck_payments.views import review_view

DECISIONS = ("credit_to_balance", "refunded_off_system", "dismissed")


def reviews(db: Store, status: str | None, page: Page) -> dict:
    """{"items": a page of the review queue in `status` (all when None), newest first, "next_cursor"}."""
    if status not in (None, "open", "resolved"):
        raise ServiceError.field("status", "status is open or resolved")
    with db.read() as session:
        items = list_reviews(session, status, page)
        return page.answer(
            items, lambda item: (item.created_at, item.id), lambda item: review_view(item, audit_of(session, item.id))
        )


def resolve(
    db: Store, units: SqlUnits, operator_id: str, review_id: str, decision: str, amount_usd_cents, note: str, now
) -> dict:
    _check_decision(decision, amount_usd_cents, note)
    with units.transaction() as unit:
        item = get_review(unit.session, review_id, lock=True)
        if item is None:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such review item")
        if item.status != "open":
            raise ServiceError(ErrorCode.INVALID_STATE, f"already resolved: {item.decision}")
        if decision == "credit_to_balance":
            if item.account_id is None:
                raise ServiceError.field("decision", "this item has no customer to credit; refund it off-system")
            credit = Credit(amount_usd_cents, Reason.REVIEW_CREDIT, f"review:{item.id}")
            credit_balance(unit, item.account_id, credit, item.id, now)
        record_decision(unit.session, item, operator_id, decision, amount_usd_cents, note, now)
    with db.read() as session:
        return review_view(get_review(session, review_id), audit_of(session, review_id))


def _check_decision(decision: str, amount_usd_cents, note: str) -> None:
    if decision not in DECISIONS:
        raise ServiceError.field("decision", f"decision is one of {', '.join(DECISIONS)}")
    if decision == "credit_to_balance":
        if isinstance(amount_usd_cents, bool) or not isinstance(amount_usd_cents, int) or amount_usd_cents <= 0:
            raise ServiceError.field("amount_usd", "crediting needs a positive amount")
    elif amount_usd_cents is not None:
        raise ServiceError.field("amount_usd", "only credit_to_balance takes an amount")
    if decision != "credit_to_balance" and not (note or "").strip():
        raise ServiceError.field("note", "say why (the refund transaction, or the reason to dismiss)")


def switch_method(db: Store, operator_id: str, method: Method, enabled: bool, now: datetime) -> None:
    if not isinstance(enabled, bool):
        raise ServiceError.field("enabled", "enabled is true or false")
    with db.transaction() as tx:
        row = tx.session.get(MethodSwitch, (method.asset, method.network)) or MethodSwitch(
            asset=method.asset, network=method.network, enabled=enabled, updated_by=operator_id, updated_at=now
        )
        row.enabled, row.updated_by, row.updated_at = enabled, operator_id, now
        tx.session.add(row)
