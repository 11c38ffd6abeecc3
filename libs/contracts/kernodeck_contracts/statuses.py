"""Statuses more than one service reads: an order's (orders'), a payment's (payments') and a transfer's (the
watchers'). String enums: their values are what the bus, the databases and the API carry, in the order the
API's document lists them."""

from enum import StrEnum


class OrderStatus(StrEnum):
    AWAITING_PAYMENT = "awaiting_payment"
    PAID = "paid"
    PROVISIONING = "provisioning"
    READY = "ready"
    ENDED = "ended"
    CANCELLED = "cancelled"
    FAILED = "failed"


class PaymentStatus(StrEnum):
    """A payment intent's customer-facing status."""

    AWAITING_TRANSFER = "awaiting_transfer"
    SEEN = "seen"
    CONFIRMING = "confirming"
    SETTLED = "settled"
    EXPIRED = "expired"
    UNDERPAID = "underpaid"
    OVERPAID = "overpaid"
    LATE = "late"
    IN_REVIEW = "in_review"


class TransferStatus(StrEnum):
    """A transfer to a watched address, as its watcher sees it."""

    SEEN = "seen"  # in the mempool
    CONFIRMING = "confirming"  # in a block, fewer confirmations than required
    CONFIRMED = "confirmed"
    REVERTED = "reverted"  # dropped, replaced, or its block orphaned; may come back


def values(statuses: type[StrEnum]) -> tuple[str, ...]:
    """The wire values of `statuses`, in order: `Literal[values(OrderStatus)]` types an API field with them."""
    return tuple(status.value for status in statuses)
