"""Order rules: the price snapshot, the status machine, when an unpaid order lapses. No I/O."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.rpc import OrderSummary, Quote


class OrderStatus(StrEnum):
    AWAITING_PAYMENT = "awaiting_payment"
    PAID = "paid"
    PROVISIONING = "provisioning"
    READY = "ready"
    ENDED = "ended"
    CANCELLED = "cancelled"
    FAILED = "failed"


_S = OrderStatus
MOVES: dict[OrderStatus, frozenset[OrderStatus]] = {
    _S.AWAITING_PAYMENT: frozenset({_S.PAID, _S.CANCELLED}),
    _S.PAID: frozenset({_S.PROVISIONING, _S.FAILED, _S.CANCELLED}),
    _S.PROVISIONING: frozenset({_S.READY, _S.FAILED}),
    _S.READY: frozenset({_S.ENDED, _S.FAILED}),
    _S.ENDED: frozenset(),
    _S.CANCELLED: frozenset(),
    _S.FAILED: frozenset(),
}

CREATED = "created"
CUSTOMER_REQUEST = "customer_request"
PAYMENT_REPORTED = "payment_reported"
UNPAID_TIMEOUT = "unpaid_timeout"


def summary_of(quote: Quote) -> OrderSummary:
    """The catalog's quote as it stands when the order is recorded; later price changes never touch it."""
    return OrderSummary.model_validate(quote.model_dump())


@dataclass(frozen=True)
class TimelineEntry:
    at: datetime
    kind: str
    detail: str = ""


@dataclass
class Order:
    id: str
    account_id: str
    status: OrderStatus
    summary: OrderSummary
    created_at: datetime
    updated_at: datetime
    timeline: list[TimelineEntry] = field(default_factory=list)
    version: int = 0


def new_order(order_id: str, account_id: str, summary: OrderSummary, at: datetime) -> Order:
    return Order(
        id=order_id,
        account_id=account_id,
        status=OrderStatus.AWAITING_PAYMENT,
        summary=summary,
        created_at=at,
        updated_at=at,
        timeline=[TimelineEntry(at=at, kind=CREATED)],
    )


def transition(order: Order, new_status: OrderStatus, at: datetime, reason: str) -> TimelineEntry:
    """The only way an order changes status: refuses any move the machine does not allow."""
    if new_status not in MOVES[order.status]:
        raise ServiceError(ErrorCode.INVALID_STATE, f"an order that is {order.status} cannot become {new_status}")
    entry = TimelineEntry(at=at, kind=new_status.value, detail=reason)
    order.status = new_status
    order.updated_at = at
    order.timeline.append(entry)
    return entry


def cancel_by_customer(order: Order, at: datetime) -> TimelineEntry:
    # Once paid, money has moved: cancelling then is an operator's decision (a refund), not the customer's.
    if order.status != OrderStatus.AWAITING_PAYMENT:
        raise ServiceError(ErrorCode.INVALID_STATE, "an order can be cancelled only while it awaits payment")
    return transition(order, OrderStatus.CANCELLED, at, CUSTOMER_REQUEST)


def is_due_for_cancellation(order: Order, now: datetime, unpaid_ttl: timedelta) -> bool:
    return order.status == OrderStatus.AWAITING_PAYMENT and now - order.created_at >= unpaid_ttl


def note(order: Order, at: datetime, kind: str, detail: str) -> TimelineEntry:
    """A timeline entry that is not a status change (the customer's "J'ai payé", for one)."""
    if kind in OrderStatus.__members__.values():
        raise ValueError(f"{kind} is a status: use transition()")
    entry = TimelineEntry(at=at, kind=kind, detail=detail)
    order.timeline.append(entry)
    return entry
