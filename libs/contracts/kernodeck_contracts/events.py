"""Bus events: one pydantic model per (source service, event type).

Every event carries `event_id` (consumers deduplicate on it), `occurred_at`
and a schema `version`. Amounts are integers (USD cents).
"""

from datetime import UTC, datetime
from typing import ClassVar
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field


def _now() -> datetime:
    return datetime.now(UTC)


class Event(BaseModel):
    # Consumers ignore fields they do not know, so producers can add fields
    # without a coordinated deploy; removing or changing one bumps `version`.
    model_config = ConfigDict(extra="ignore", frozen=True)

    source: ClassVar[str]
    type: ClassVar[str]
    version: ClassVar[int] = 1

    event_id: str = Field(default_factory=lambda: uuid4().hex)
    occurred_at: datetime = Field(default_factory=_now)

    def to_message(self) -> dict:
        return {"version": self.version, **self.model_dump(mode="json")}

    @classmethod
    def from_message(cls, payload: dict) -> "Event":
        return cls.model_validate(payload)


class OrderCreated(Event):
    source = "orders"
    type = "order_created"

    order_id: str
    account_id: str
    model_id: str
    duration_days: int
    lots: int
    total_gpus: int
    preparation: str
    total_usd_cents: int


class OrderStatusChanged(Event):
    source = "orders"
    type = "order_status_changed"

    order_id: str
    account_id: str
    status: str
    previous_status: str
    reason: str = ""


class CapacityChanged(Event):
    """Provisioning's count of lots it can still deliver for one model."""

    source = "provisioning"
    type = "capacity_changed"

    model_id: str
    available_lots: int


class PaymentRefused(Event):
    """Orders could not apply a settled payment (already paid, or cancelled): payments credits it to the balance."""

    source = "orders"
    type = "payment_refused"

    order_id: str
    account_id: str
    payment_id: str
    amount_usd_cents: int
    reason: str


class PaymentSettled(Event):
    """An order's payment is complete: by a confirmed, attributed transfer or by a balance debit."""

    source = "payments"
    type = "payment_settled"

    payment_id: str
    order_id: str
    account_id: str
    amount_usd_cents: int
    method: str  # "BTC/bitcoin", ..., or "balance"


class PaymentReported(Event):
    """The customer pressed "J'ai payé": the watcher of `network` looks at `address` now."""

    source = "payments"
    type = "payment_reported"

    payment_id: str
    order_id: str | None
    account_id: str
    network: str
    address: str


class AddressWatched(Event):
    """An address the watchers look at until `watch_until` (deadline + monitoring window)."""

    source = "payments"
    type = "address_watched"

    network: str
    address: str
    payment_id: str
    watch_until: datetime
    required_confirmations: int
    token: str | None = None  # the contract the payment expects; None for the network's own coin


class BalanceCredited(Event):
    source = "payments"
    type = "balance_credited"

    account_id: str
    amount_usd_cents: int
    reason: str  # topup, overpayment, underpayment, late_transfer, refused_payment, review


class ChainTransfer(Event):
    """A transfer to a watched address as one watcher sees it.

    `(network, txid, index)` identifies it: output index on UTXO chains, log
    index for tokens, instruction index on Solana, 0 for a native transfer
    on account chains. `token` is the contract (mint on Solana) or None for
    the network's own coin. `sequence` grows with every event a network's
    watcher emits, so a consumer can ignore an event older than one it
    applied for the same transfer. Amounts are base units. `occurred_at` is
    when the transfer happened: first seen in the mempool, or its block's
    time, whichever came first; it decides whether it beat a deadline.
    """

    source = "chain"

    network: str
    txid: str
    index: int
    address: str
    token: str | None = None
    amount: int
    block_height: int | None = None
    block_hash: str | None = None
    confirmations: int = 0
    sequence: int


class TransferSeen(ChainTransfer):
    type = "transfer_seen"


class TransferConfirmations(ChainTransfer):
    type = "transfer_confirmations"


class TransferConfirmed(ChainTransfer):
    type = "transfer_confirmed"


class TransferReverted(ChainTransfer):
    """Dropped from the mempool, replaced, or in a block a reorg orphaned."""

    type = "transfer_reverted"


class WatcherStatus(Event):
    """A network's active watcher, every few seconds: how far behind its node it is."""

    source = "chain"
    type = "watcher_status"

    network: str
    node_height: int
    scanned_height: int
    lag_seconds: int
    lagging: bool


ALL_EVENTS: tuple[type[Event], ...] = (
    OrderCreated,
    OrderStatusChanged,
    PaymentRefused,
    CapacityChanged,
    PaymentSettled,
    PaymentReported,
    AddressWatched,
    BalanceCredited,
    TransferSeen,
    TransferConfirmations,
    TransferConfirmed,
    TransferReverted,
    WatcherStatus,
)
