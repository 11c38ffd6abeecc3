"""Payment intents and the transfers attributed to them, as plain data."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from fractions import Fraction

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.statuses import PaymentStatus, TransferStatus
from kernodeck_payments.domain.methods import Method
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
class PaymentRequest:
    """What a customer asks to pay, before intake gives it a locked rate, an amount and an address."""

    method: Method
    purpose: Purpose
    account_id: str
    reference_id: str  # the order id, the top-up id or the extension id
    usd_cents: int
    order_id: str | None = None  # the order an extension's payment extends
    deadline: datetime | None = None  # the intent's, when sooner than its TTL


@dataclass(frozen=True)
class PaymentIntent:
    """A payment intent as payments keeps it: what it pays, its locked rate and amount, its address, its status."""

    id: str
    purpose: Purpose
    account_id: str
    reference_id: str  # the order id, the top-up id or the extension id
    asset: str
    network: str
    address: str  # as shown to the customer (EIP-55 case on Ethereum)
    amount: int  # base units asked
    amount_usd_cents: int
    rate: str  # USD per whole unit, locked until the deadline
    rate_source: str
    required_confirmations: int
    status: PaymentStatus
    expires_at: datetime
    watch_until: datetime
    created_at: datetime
    updated_at: datetime
    order_id: str | None = None  # the order an extension's intent extends
    address_key: str | None = None  # address_key(network, address); None only on intents of an older release
    derivation_index: int | None = None  # None for an address of the Solana pool
    token: str | None = None  # the token's contract (mint), None for the network's own coin
    settled_at: datetime | None = None
    reported_at: datetime | None = None

    def facts(self) -> "Intent":
        """What the reconciliation rules read of it."""
        return Intent(
            id=self.id,
            purpose=Purpose(self.purpose),
            account_id=self.account_id,
            reference_id=self.reference_id,
            asset=self.asset,
            network=self.network,
            address=self.address,
            amount=self.amount,
            amount_usd_cents=self.amount_usd_cents,
            rate=self.rate,
            expires_at=self.expires_at,
            required_confirmations=self.required_confirmations,
            settled=self.settled_at is not None,
        )


@dataclass(frozen=True)
class RecordedTransfer:
    """A transfer to a watched address as payments keeps it: the watcher's last word on it, and what it paid."""

    network: str
    txid: str
    index: int
    address: str
    intent_id: str | None  # None: no intent owned the address when it was first seen
    token: str | None
    amount: int
    confirmations: int
    state: TransferStatus
    sequence: int
    epoch: int  # (epoch, sequence) orders the watcher's events across its databases
    block_height: int | None
    block_hash: str | None
    disposition: Disposition | None
    first_seen_at: datetime
    updated_at: datetime

    def facts(self) -> "Transfer":
        """What the reconciliation rules read of it."""
        return Transfer(
            network=self.network,
            txid=self.txid,
            index=self.index,
            token=self.token,
            amount=self.amount,
            confirmations=self.confirmations,
            state=TransferStatus(self.state),
            first_seen_at=self.first_seen_at,
            disposition=Disposition(self.disposition) if self.disposition else None,
        )


@dataclass(frozen=True)
class Intent:
    """An intent as the reconciliation rules read it (PaymentIntent.facts)."""

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
    """A transfer as the reconciliation rules read it (RecordedTransfer.facts)."""

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
