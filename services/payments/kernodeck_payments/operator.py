"""What operators see of the review queue (their decisions: use_cases/reviews.py), and the method switches, each
recorded with who made it."""

from datetime import datetime

from kernodeck_contracts.errors import ServiceError
from kernodeck_kit.outbox import Store
from kernodeck_kit.paging import Page
from kernodeck_payments.domain.methods import Method
from kernodeck_payments.store.reviews import audit_of, get_review, list_reviews
from kernodeck_payments.store.tables import MethodSwitch
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


def review(db: Store, review_id: str) -> dict:
    """The review item as operators see it, with its audit trail."""
    with db.read() as session:
        return review_view(get_review(session, review_id), audit_of(session, review_id))


def switch_method(db: Store, operator_id: str, method: Method, enabled: bool, now: datetime) -> None:
    if not isinstance(enabled, bool):
        raise ServiceError.field("enabled", "enabled is true or false")
    with db.transaction() as tx:
        row = tx.session.get(MethodSwitch, (method.asset, method.network)) or MethodSwitch(
            asset=method.asset, network=method.network, enabled=enabled, updated_by=operator_id, updated_at=now
        )
        row.enabled, row.updated_by, row.updated_at = enabled, operator_id, now
        tx.session.add(row)
