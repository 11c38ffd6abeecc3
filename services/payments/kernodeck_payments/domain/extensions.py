"""Payments' copy of the extensions it may take a payment for, kept from support's events.

support confirms an extension with its price and due date, and says when it is paid. The copy can lag
behind support: a payment settled for an extension paid meanwhile, or past its due date, is refused by
support and credited to the balance.
"""

from dataclasses import dataclass
from datetime import datetime

from kernodeck_contracts.errors import ErrorCode, ServiceError


@dataclass(frozen=True)
class PayableExtension:
    extension_id: str
    order_id: str
    account_id: str
    price_usd_cents: int
    due_by: datetime
    paid: bool = False


def check_payable_extension(extension: PayableExtension | None, account_id: str, now: datetime) -> PayableExtension:
    """The extension, when `account_id` may pay it now; not_found (another account's too) or invalid_state."""
    if extension is None or extension.account_id != account_id:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such extension")
    if extension.paid:
        raise ServiceError(ErrorCode.INVALID_STATE, "this extension is paid already")
    if now > extension.due_by:
        raise ServiceError(ErrorCode.INVALID_STATE, "this extension is past its due date: ask support again")
    return extension
