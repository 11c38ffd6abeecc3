"""Top-ups feed the balance; they come in four sizes only."""

from dataclasses import dataclass
from datetime import datetime

from kernodeck_contracts.errors import ServiceError

TOPUP_AMOUNTS_CENTS = (10_000, 50_000, 200_000, 1_000_000)  # 100, 500, 2,000 and 10,000 USD


@dataclass(frozen=True)
class Topup:
    """What an account asked to add to its balance; its payment intent names it as its reference."""

    id: str
    account_id: str
    amount_usd_cents: int
    created_at: datetime


def check_topup_amount(cents: int) -> int:
    if isinstance(cents, bool) or cents not in TOPUP_AMOUNTS_CENTS:
        raise ServiceError.field("amount_usd", "a top-up is 100, 500, 2000 or 10000 USD")
    return cents
