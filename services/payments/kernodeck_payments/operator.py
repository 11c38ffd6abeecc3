"""What operators see of the review queue, with its audit trail (their decisions: use_cases/reviews.py)."""

from kernodeck_contracts.errors import ServiceError
from kernodeck_kit.outbox import Store
from kernodeck_kit.paging import Page
from kernodeck_payments.store.reviews import audit_of, get_review, list_reviews, review_of
from kernodeck_payments.views import review_view


def reviews(db: Store, status: str | None, page: Page) -> dict:
    """{"items": a page of the review queue in `status` (all when None), newest first, "next_cursor"}."""
    if status not in (None, "open", "resolved"):
        raise ServiceError.field("status", "status is open or resolved")
    with db.read() as session:
        items = list_reviews(session, status, page)
        return page.answer(
            items,
            lambda item: (item.created_at, item.id),
            lambda item: review_view(review_of(item), audit_of(session, item.id)),
        )


def review(db: Store, review_id: str) -> dict:
    """The review item as operators see it, with its audit trail."""
    with db.read() as session:
        return review_view(review_of(get_review(session, review_id)), audit_of(session, review_id))
