"""Payment intents and the transfers attributed to them, as plain data."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from fractions import Fraction

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.statuses import TransferStatus
from kernodeck_payments.domain.windows import seconds_until_below


class Purpose(StrEnum):
    ORDER = "order"
    TOPUP = "topup"
    EXTENSION = "extension"


class Disposition(StrEnum):
    """What a confirmed transfer was used for; set once, never undone."""

    SETTLEMENT = "settlement"
    CREDITED = "credited"
    REVIEW = "review"


@dataclass(frozen=True)
class Intent:
    id: str
    purpose: Purpose
    account_id: str
    reference_id: str  # the order id, the top-up id or the extension id
    asset: str
    network: str
    address: str
    amount: int  # base units asked
    amount_usd_cents: int
    rate: str  # USD per whole unit, locked until the deadline
    expires_at: datetime
    required_confirmations: int
    settled: bool = False

    @property
    def price(self) -> Fraction:
        return Fraction(self.rate)


@dataclass(frozen=True)
class Transfer:
    network: str
    txid: str
    index: int
    token: str | None
    amount: int
    confirmations: int
    state: TransferStatus
    first_seen_at: datetime
    disposition: Disposition | None = None

    @property
    def key(self) -> str:
        return transfer_key(self.network, self.txid, self.index)


def transfer_key(network: str, txid: str, index: int) -> str:
    """What names an on-chain transfer everywhere: in review items, credit keys and dispositions."""
    return f"{network}:{txid}:{index}"


def normalize_token(network: str, token: str | None) -> str | None:
    """One spelling per contract: Ethereum hex is case-insensitive (EIP-55 case is a checksum), Tron base58 is not."""
    return token.lower() if token and network == "ethereum" else token


def address_key(network: str, address: str) -> str:
    """One spelling per deposit address, for matching what a watcher reports to the intent that owns it."""
    return normalize_token(network, address)


def check_address_cap(issued: list[datetime], limit: int, window: timedelta, network: str, now: datetime) -> None:
    """Refuse one more address on `network` while the account's unfunded addresses issued within `window` reach
    `limit`; `issued`: when they were, oldest first. The wait ends when enough of them left the window."""
    wait = seconds_until_below(issued, limit, window, now)
    if wait is None:
        return
    raise ServiceError(
        ErrorCode.TOO_MANY_REQUESTS,
        f"{len(issued)} {network} addresses were given to this account in the last "
        f"{int(window.total_seconds()) // 3600} hours and nothing was paid to them: pay one of your open payments, "
        "or choose another network",
        retry_after=wait,
    )
