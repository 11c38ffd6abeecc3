"""Order rules: the price snapshot, the status machine, when an unpaid order lapses. No I/O."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.rpc import OrderSummary, Quote
from kernodeck_contracts.ssh_keys import InvalidSshKey, canonical_ssh_key
from kernodeck_contracts.statuses import OrderStatus, PaymentStatus
from kernodeck_contracts.timeline import Said, TimelineCode

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

# Provisioning moves a paid order along this path (FAILED may interrupt it anywhere).
DELIVERY_PATH = (_S.PAID, _S.PROVISIONING, _S.READY, _S.ENDED)
# What a step of that path says when its own event has not come first.
SKIPPED = {_S.PROVISIONING: Said(TimelineCode.PREPARING)}
PREPARATION_NOTE_MAX = 2000
CUSTOM = "custom"

# Timeline kinds other than the statuses.
CREATED = "created"
PAYMENT_REPORTED = "payment_reported"
RENTAL_ENDING = "rental_ending"
RENTAL_EXTENDED = "rental_extended"
SUPPORT_REQUEST = "support_request"
SUPPORT_ANSWERED = "support_answered"
EXTENSION_CONFIRMED = "extension_confirmed"
EXTENSION_PAID = "extension_paid"


def summary_of(quote: Quote) -> OrderSummary:
    """The catalog's quote as it stands when the order is recorded; later price changes never touch it."""
    return OrderSummary.model_validate(quote.model_dump())


class StaleOrder(Exception):
    """Another worker changed the order since it was read."""


@dataclass(frozen=True)
class TimelineEntry:
    """When, what kind of step (a status, or a note such as "J'ai payé"), and what it says (a code and its
    parameters, rendered in the customer's language; `detail` is the English)."""

    at: datetime
    kind: str
    said: Said

    @property
    def detail(self) -> str:
        return self.said.text("en")


# Payment statuses (payments') during which a transfer for the order is on its way.
IN_FLIGHT = (PaymentStatus.SEEN, PaymentStatus.CONFIRMING)


@dataclass(frozen=True)
class PaymentInFlight:
    """What payments told of one of the order's crypto payments, as of `at`; `expires_at` once known."""

    payment_id: str
    order_id: str
    status: str
    at: datetime
    expires_at: datetime | None = None

    def can_still_arrive(self, now: datetime) -> bool:
        return self.status in IN_FLIGHT or (
            self.status == PaymentStatus.AWAITING_TRANSFER and self.expires_at is not None and self.expires_at > now
        )


@dataclass
class RentalDates:
    """The term as provisioning reports it: it starts at delivery, never at the order or "J'ai payé"."""

    delivered_at: datetime
    starts_at: datetime
    ends_at: datetime


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
    ssh_public_key: str | None = None
    preparation_note: str | None = None
    rental: RentalDates | None = None


def new_order(
    order_id: str,
    account_id: str,
    summary: OrderSummary,
    at: datetime,
    ssh_public_key: str | None = None,
    preparation_note: str | None = None,
) -> Order:
    return Order(
        id=order_id,
        account_id=account_id,
        status=OrderStatus.AWAITING_PAYMENT,
        summary=summary,
        created_at=at,
        updated_at=at,
        timeline=[TimelineEntry(at=at, kind=CREATED, said=Said(TimelineCode.ORDER_RECORDED))],
        ssh_public_key=ssh_public_key,
        preparation_note=preparation_note,
    )


def check_delivery_wishes(preparation: str, ssh_public_key, preparation_note) -> tuple[str | None, str | None]:
    """The key (canonical) and the custom preparation's description, checked; raises per field."""
    errors = []
    if ssh_public_key is not None:
        try:
            ssh_public_key = canonical_ssh_key(ssh_public_key)
        except InvalidSshKey as error:
            errors.append({"field": "ssh_public_key", "message": str(error)})
    if preparation_note is not None:
        if preparation != CUSTOM:
            errors.append(
                {"field": "preparation_note", "message": "a description goes only with the custom preparation"}
            )
        elif not isinstance(preparation_note, str) or not preparation_note.strip():
            errors.append({"field": "preparation_note", "message": "describe the environment you want"})
        elif len(preparation_note) > PREPARATION_NOTE_MAX:
            errors.append({"field": "preparation_note", "message": f"at most {PREPARATION_NOTE_MAX} characters"})
    if errors:
        raise ServiceError(ErrorCode.VALIDATION_ERROR, "the delivery wishes are not valid", errors)
    return ssh_public_key, preparation_note


def follow_delivery(order: Order, target: OrderStatus, at: datetime, said: Said) -> list[TimelineEntry]:
    """Move along provisioning's path up to `target`, whatever order its events arrive in; an event behind
    the order's status, or for an order already over, changes nothing."""
    if order.status not in DELIVERY_PATH[:-1]:
        return []
    if target == OrderStatus.FAILED:
        return [transition(order, target, at, said)]
    here, there = DELIVERY_PATH.index(order.status), DELIVERY_PATH.index(target)
    # A step skipped (its event arriving later, or never) says what it is; the target says what happened.
    steps = DELIVERY_PATH[here + 1 : there + 1]
    return [transition(order, step, at, said if step == target else SKIPPED.get(step, said)) for step in steps]


def transition(order: Order, new_status: OrderStatus, at: datetime, said: Said) -> TimelineEntry:
    """The only way an order changes status: refuses any move the machine does not allow."""
    if new_status not in MOVES[order.status]:
        raise ServiceError(ErrorCode.INVALID_STATE, f"an order that is {order.status} cannot become {new_status}")
    entry = TimelineEntry(at=at, kind=new_status.value, said=said)
    order.status = new_status
    order.updated_at = at
    order.timeline.append(entry)
    return entry


def cancel_by_customer(order: Order, at: datetime) -> TimelineEntry:
    # Once paid, money has moved: cancelling then is an operator's decision (a refund), not the customer's.
    if order.status != OrderStatus.AWAITING_PAYMENT:
        raise ServiceError(ErrorCode.INVALID_STATE, "an order can be cancelled only while it awaits payment")
    return transition(order, OrderStatus.CANCELLED, at, Said(TimelineCode.CANCELLED_BY_CUSTOMER))


def is_due_for_cancellation(order: Order, now: datetime, unpaid_ttl: timedelta) -> bool:
    return order.status == OrderStatus.AWAITING_PAYMENT and now - order.created_at >= unpaid_ttl


def note(order: Order, at: datetime, kind: str, said: Said) -> TimelineEntry:
    """A timeline entry that is not a status change (the customer's "J'ai payé", for one)."""
    if kind in OrderStatus.__members__.values():
        raise ValueError(f"{kind} is a status: use transition()")
    entry = TimelineEntry(at=at, kind=kind, said=said)
    order.timeline.append(entry)
    return entry


def order_key(order: Order) -> tuple:
    """Where an order stands in the account's list: newest first, the id breaking ties."""
    return (order.created_at, order.id)


@dataclass(frozen=True)
class OrderLimits:
    """What one account may open: unpaid orders at once (a few configurations side by side), and new orders in
    a sliding window."""

    unpaid: int
    created_per_window: int
    window: timedelta


def check_order_limits(limits: OrderLimits, unpaid: int, created_in_window: list[datetime], now: datetime) -> None:
    """Refuse one more order past the account's unpaid orders or its pace; `created_in_window`: the times of its
    orders created in the window, oldest first."""
    if unpaid >= limits.unpaid:
        raise ServiceError(
            ErrorCode.UNPAID_ORDERS_LIMIT,
            f"you have {unpaid} unpaid orders and an account may have {limits.unpaid}: pay or cancel one first",
        )
    if len(created_in_window) >= limits.created_per_window:
        wait = created_in_window[0] + limits.window - now
        raise ServiceError(
            ErrorCode.TOO_MANY_REQUESTS,
            f"an account may create {limits.created_per_window} orders in {int(limits.window.total_seconds()) // 60}"
            " minutes",
            retry_after=max(1, -int(-wait.total_seconds() // 1)),
        )
