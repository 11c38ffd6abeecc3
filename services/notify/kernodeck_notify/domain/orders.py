"""Notify's copy of its customers' orders, for /status."""

from dataclasses import dataclass
from datetime import datetime

from kernodeck_contracts.statuses import OrderStatus

OPEN_STATUSES = (OrderStatus.AWAITING_PAYMENT, OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.READY)


@dataclass(frozen=True)
class OrderCopy:
    order_id: str
    account_id: str
    status: str
    changed_at: datetime


def follow(copy: OrderCopy | None, order_id: str, account_id: str, status: str, at: datetime) -> OrderCopy | None:
    """The copy after the order's status changed `at`; None when that changes nothing. Events may come out of
    order: the latest change wins."""
    if copy is not None and at < copy.changed_at:
        return None
    return OrderCopy(order_id, account_id, status, at)
