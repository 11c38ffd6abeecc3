"""An item of the operator review queue: a cause the rules leave to a person, and the decision once made."""

from dataclasses import dataclass, replace
from datetime import datetime


@dataclass(frozen=True)
class ReviewItem:
    id: str
    key: str  # what caused it; the same cause never queues twice
    reason: str
    status: str  # open or resolved
    created_at: datetime
    group_key: str | None = None  # causes of one kind on one address join the group's open item
    transfers: int = 1  # how many causes the item holds
    intent_id: str | None = None
    account_id: str | None = None  # the customer a credit would go to; None when none is known
    transfer_key: str | None = None
    decision: str | None = None
    amount_usd_cents: int | None = None
    note: str = ""
    resolved_by: str | None = None
    resolved_at: datetime | None = None

    def resolved(
        self, actor: str, decision: str, amount_usd_cents: int | None, note: str, now: datetime
    ) -> "ReviewItem":
        return replace(
            self,
            status="resolved",
            decision=decision,
            amount_usd_cents=amount_usd_cents,
            note=note,
            resolved_by=actor,
            resolved_at=now,
        )
