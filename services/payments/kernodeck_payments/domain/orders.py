"""Payments' copy of the orders it may take a payment for, kept from orders' events.

orders says when an order is created (with its total) and when its status changes; once it leaves
`awaiting_payment` it never comes back to it. The copy can lag behind orders: a payment settled for an
order that stopped being payable meanwhile is refused by orders and credited to the balance.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import OrderCreated
from kernodeck_contracts.statuses import OrderStatus
from kernodeck_payments.domain.windows import seconds_until_below


@dataclass(frozen=True)
class PayableOrder:
    order_id: str
    account_id: str
    status: str
    total_usd_cents: int | None  # None while only a status change has arrived, like the model and its GPUs
    expires_at: datetime | None = None
    model_id: str | None = None
    total_gpus: int | None = None  # what provisioning holds before a payment is opened
    ssh_key_given: bool | None = None  # with the order; None for an order recorded before payments kept this


def created_order(event: OrderCreated, status: str) -> PayableOrder:
    """The order as payments' copy keeps it from its `order_created`, at `status`."""
    return PayableOrder(
        event.order_id,
        event.account_id,
        status,
        event.total_usd_cents,
        event.expires_at,
        event.model_id,
        event.total_gpus,
        event.ssh_public_key is not None,
    )


def check_payable(order: PayableOrder | None, account_id: str) -> PayableOrder:
    """The order, when `account_id` may pay it now; not_found (another account's too) or invalid_state."""
    if order is None or order.account_id != account_id or order.total_usd_cents is None:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
    if order.status != OrderStatus.AWAITING_PAYMENT:
        raise ServiceError(ErrorCode.INVALID_STATE, f"the order is {order.status}, not awaiting payment")
    return order


def account_key_needed(order: PayableOrder) -> bool:
    """No money is taken for what cannot be delivered: a machine is handed over by SSH, with the order's key or,
    without one, the account's, which provisioning (its keeper) checks as it holds the GPUs (ssh_key_required)."""
    return order.ssh_key_given is False


def intent_deadline(order: PayableOrder, now: datetime, ttl: timedelta, shortest: timedelta) -> datetime:
    """The deadline of an intent opened now for `order`: never after the order's own, when orders would cancel
    it unpaid, so that a transfer on time for the intent is on time for the order too. Refused (invalid_state)
    when less than `shortest` is left to pay."""
    deadline = now + ttl if order.expires_at is None else min(now + ttl, order.expires_at)
    if deadline - now < shortest:
        lapse = order.expires_at.isoformat(timespec="seconds") if order.expires_at else "soon"
        raise ServiceError(
            ErrorCode.INVALID_STATE, f"the order lapses at {lapse}: too little time is left to pay it by crypto"
        )
    return deadline


def check_cooling_off(expired: list[datetime], limit: int, window: timedelta, now: datetime) -> None:
    """Refuse a new hold while `limit` of the account's order intents expired unpaid within `window`; `expired`:
    when those of the window expired, oldest first. The wait ends when enough of them left the window."""
    wait = seconds_until_below(expired, limit, window, now)
    if wait is None:
        return
    raise ServiceError(
        ErrorCode.HOLDS_COOLING_OFF,
        f"{len(expired)} of your payments expired unpaid in the last {int(window.total_seconds()) // 3600} hours "
        f"while GPUs were held for them: new payment instructions for orders open again later (pay with the balance "
        f"meanwhile)",
        retry_after=wait,
    )
