"""Payments' copy of the orders it may take a payment for, kept from orders' events.

orders says when an order is created (with its total) and when its status changes; once it leaves
`awaiting_payment` it never comes back to it. The copy can lag behind orders: a payment settled for an
order that stopped being payable meanwhile is refused by orders and credited to the balance.
"""

from dataclasses import dataclass
from datetime import datetime

from kernodeck_contracts.errors import ErrorCode, ServiceError

AWAITING_PAYMENT = "awaiting_payment"


@dataclass(frozen=True)
class PayableOrder:
    order_id: str
    account_id: str
    status: str
    total_usd_cents: int | None  # None while only a status change has arrived, like the model and its GPUs
    expires_at: datetime | None = None
    model_id: str | None = None
    total_gpus: int | None = None  # what provisioning holds before a payment is opened


def check_payable(order: PayableOrder | None, account_id: str) -> PayableOrder:
    """The order, when `account_id` may pay it now; not_found (another account's too) or invalid_state."""
    if order is None or order.account_id != account_id or order.total_usd_cents is None:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
    if order.status != AWAITING_PAYMENT:
        raise ServiceError(ErrorCode.INVALID_STATE, f"the order is {order.status}, not awaiting payment")
    return order
