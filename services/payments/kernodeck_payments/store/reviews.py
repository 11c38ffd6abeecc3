"""The operator review queue, with its audit trail."""

from datetime import datetime
from uuid import uuid4

from sqlalchemy import select
from sqlmodel import Session

from kernodeck_kit.db import insert_for
from kernodeck_kit.paging import Page
from kernodeck_kit.rows import copy_as
from kernodeck_payments.domain.reviews import ReviewItem
from kernodeck_payments.metrics import REVIEWS_OPENED
from kernodeck_payments.store import one_or_none, write_onto
from kernodeck_payments.store.tables import ReviewAudit, ReviewItemRow

SYSTEM = "system"


def open_review(
    session: Session,
    key: str,
    reason: str,
    now: datetime,
    intent_id: str | None = None,
    account_id: str | None = None,
    transfer_key: str | None = None,
    group: str | None = None,
) -> bool:
    """Queue an item unless one with the same key exists; True when queued now. With a `group`, a cause joins
    the group's open item instead (counted, and named in its audit trail) when there is one."""
    if group is not None and _join_group(session, group, key, transfer_key, now):
        return False
    review_id = uuid4().hex
    inserted = session.execute(
        insert_for(session, ReviewItemRow)
        .values(
            id=review_id,
            key=key,
            reason=reason,
            status="open",
            intent_id=intent_id,
            account_id=account_id,
            transfer_key=transfer_key,
            group_key=group,
            transfers=1,
            note="",
            created_at=now,
        )
        .on_conflict_do_nothing(index_elements=["key"])
    ).rowcount
    if inserted:
        REVIEWS_OPENED.labels(reason).inc()
        session.add(ReviewAudit(review_id=review_id, actor=SYSTEM, action="opened", detail=reason, at=now))
    return bool(inserted)


def _join_group(session: Session, group: str, key: str, transfer_key: str | None, now: datetime) -> bool:
    query = select(ReviewItemRow).where(ReviewItemRow.group_key == group, ReviewItemRow.status == "open")
    item = one_or_none(session, query.order_by(ReviewItemRow.created_at).limit(1), lock=True)
    if item is None:
        return False
    item.transfers += 1
    session.add(item)
    session.add(ReviewAudit(review_id=item.id, actor=SYSTEM, action="joined", detail=transfer_key or key, at=now))
    return True


def list_reviews(session: Session, status: str | None, page: Page) -> list[ReviewItemRow]:
    """A page of the review queue, newest first (one more than its limit when there is more)."""
    query = select(ReviewItemRow)
    if status:
        query = query.where(ReviewItemRow.status == status)
    return list(session.execute(page.select(query, ReviewItemRow.created_at, ReviewItemRow.id)).scalars())


def get_review(session: Session, review_id: str, lock: bool = False) -> ReviewItemRow | None:
    return one_or_none(session, select(ReviewItemRow).where(ReviewItemRow.id == review_id), lock)


def audit_of(session: Session, review_id: str) -> list[ReviewAudit]:
    return list(
        session.execute(
            select(ReviewAudit).where(ReviewAudit.review_id == review_id).order_by(ReviewAudit.id)
        ).scalars()
    )


def review_of(row: ReviewItemRow) -> ReviewItem:
    return copy_as(ReviewItem, row)


def record_decision(session: Session, row: ReviewItemRow, item: ReviewItem) -> None:
    """`row` as `item`, resolved, and its decision in the audit trail."""
    write_onto(row, item)
    cents, note = item.amount_usd_cents, item.note
    detail = f"{item.decision}" + (f" {cents} cents" if cents else "") + (f": {note}" if note else "")
    session.add(
        ReviewAudit(review_id=item.id, actor=item.resolved_by, action="resolved", detail=detail, at=item.resolved_at)
    )
