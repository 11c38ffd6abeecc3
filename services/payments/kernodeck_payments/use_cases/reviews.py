"""An operator's decision on an item of the review queue, recorded with who made it: credit the customer's
balance (once, under the item's key), or say it was refunded off-system or dismissed, with a note."""

from typing import Protocol

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.units import Units
from kernodeck_payments.domain.reconcile import Credit
from kernodeck_payments.domain.reviews import ReviewItem
from kernodeck_payments.ledger.domain import Reason
from kernodeck_payments.use_cases.settlement import SettlementUnit, credit_balance

DECISIONS = ("credit_to_balance", "refunded_off_system", "dismissed")


class ReviewUnit(SettlementUnit, Protocol):
    def review(self, review_id: str) -> ReviewItem | None:
        """The item, locked until the unit ends."""

    def record_decision(self, item: ReviewItem) -> None:
        """The item as resolved (ReviewItem.resolved: the unit read it), and the decision in its audit trail."""


def resolve_review(
    units: Units[ReviewUnit], operator_id: str, review_id: str, decision: str, amount_usd_cents, note: str, now
) -> None:
    _check_decision(decision, amount_usd_cents, note)
    with units.transaction() as unit:
        item = unit.review(review_id)
        if item is None:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such review item")
        if item.status != "open":
            raise ServiceError(ErrorCode.INVALID_STATE, f"already resolved: {item.decision}")
        if decision == "credit_to_balance":
            if item.account_id is None:
                raise ServiceError.field("decision", "this item has no customer to credit; refund it off-system")
            credit = Credit(amount_usd_cents, Reason.REVIEW_CREDIT, f"review:{item.id}")
            credit_balance(unit, item.account_id, credit, item.id, now)
        unit.record_decision(item.resolved(operator_id, decision, amount_usd_cents, note, now))


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
