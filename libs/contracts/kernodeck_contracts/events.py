"""Bus events: one pydantic model per (source service, event type).

Every event carries `event_id` (consumers deduplicate on it), `occurred_at`
and a schema `version`. Amounts are integers (USD cents).
"""

import hashlib
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
    # Not secrets: what provisioning installs for the customer, and the `custom` preparation's wish.
    ssh_public_key: str | None = None
    preparation_note: str | None = None
    expires_at: datetime | None = None  # when the order lapses unless paid (its payments may not outlive it)


class OrderStatusChanged(Event):
    source = "orders"
    type = "order_status_changed"

    order_id: str
    account_id: str
    status: str
    previous_status: str
    reason: str = ""


class CapacityChanged(Event):
    """Provisioning's count of lots it can still deliver for one model: the largest order that fits now.

    A rental lives on one node (one SSH host), so this is the most lots any single node of the model has
    free, not the sum over nodes."""

    source = "provisioning"
    type = "capacity_changed"

    model_id: str
    available_lots: int
    held_lots: int = 0  # lots set aside, over all the model's nodes, by holds for orders not paid yet


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
    extension_id: str | None = None  # set when the payment is for a confirmed extension of the order


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
    the network's own coin. `(epoch, sequence)` grows with every event a
    network's watcher emits, so a consumer can ignore an event older than one
    it applied for the same transfer: `sequence` counts the events of one
    watcher database, and `epoch` (milliseconds since 1970 when the active
    watcher took over, never lower than before) orders a new, restored or
    moved database after everything the old one emitted. Amounts are base units. `occurred_at` is
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
    epoch: int = 0


class TransferSeen(ChainTransfer):
    type = "transfer_seen"


class TransferConfirmations(ChainTransfer):
    type = "transfer_confirmations"


class TransferConfirmed(ChainTransfer):
    type = "transfer_confirmed"


class TransferReverted(ChainTransfer):
    """Dropped from the mempool, replaced, or in a block a reorg orphaned."""

    type = "transfer_reverted"


class BalanceMismatch(Event):
    """A watched address holds more of the network's own coin, or of the token its watch expects, than the transfers
    its watcher saw in blocks: something paid it unseen (ETH or TRX sent by a contract, a transaction of a shape the
    watcher could not read, a token payment in a block no scan covered). Payments opens a review item. Amounts in
    base units; `height` is the scanned block the transfers were counted up to."""

    source = "chain"
    type = "balance_mismatch"

    network: str
    address: str
    balance: int
    seen: int
    height: int
    token: str | None = None  # the token contract; None for the network's own coin


class WatcherStatus(Event):
    """A network's active watcher, every few seconds: how far behind its node it is."""

    source = "chain"
    type = "watcher_status"

    network: str
    node_height: int
    scanned_height: int
    lag_seconds: int
    lagging: bool
    # Kinds of transfer this watcher cannot see with its node (`internal_eth`: ETH sent by a contract, the node
    # having no tracing API; `internal_trx`: TRX sent by a contract): the method is degraded, the balance check
    # its backstop.
    unseen: list[str] = []


class PaymentInstructionsCreated(Event):
    """A crypto payment intent was opened: what the customer is asked to send. Never a secret."""

    source = "payments"
    type = "payment_instructions_created"

    payment_id: str
    account_id: str
    purpose: str  # "order", "topup" or "extension"
    order_id: str | None = None
    topup_id: str | None = None
    extension_id: str | None = None
    asset: str
    network: str
    amount: str  # decimal string in the asset's unit, as shown to the customer
    amount_base_units: int
    amount_usd_cents: int
    expires_at: datetime


class PaymentStatusChanged(Event):
    """A payment intent's customer-facing status moved (seen, confirming, settled, underpaid, overpaid, late,
    expired, in_review). `confirmations` is the best confirmation count among its transfers."""

    source = "payments"
    type = "payment_status_changed"

    payment_id: str
    account_id: str
    purpose: str
    order_id: str | None = None
    topup_id: str | None = None
    extension_id: str | None = None
    status: str
    previous_status: str
    confirmations: int = 0
    required_confirmations: int = 0


class BalanceDebited(Event):
    """The balance paid for something (an order or an extension)."""

    source = "payments"
    type = "balance_debited"

    account_id: str
    amount_usd_cents: int
    order_id: str | None = None
    extension_id: str | None = None


class SupportRequestOpened(Event):
    """A customer's request about an order, a top-up (`topup_id`) or, with neither, the account."""

    source = "support"
    type = "support_request_opened"

    request_id: str
    order_id: str | None
    account_id: str
    kind: str  # incident, extension, question
    topup_id: str | None = None


class SupportRequestAnswered(Event):
    """Support answered a request; the customer reads it under the request and, for an order, in its timeline.
    `answer` is an operator's words (never a secret); `code` and `params`, when set, what support itself says
    with them (a `kernodeck_contracts.timeline` answer code: an extension confirmed or refused, a change of
    configuration confirmed)."""

    source = "support"
    type = "support_request_answered"

    request_id: str
    order_id: str | None
    account_id: str
    kind: str
    answer: str = ""
    topup_id: str | None = None
    code: str | None = None
    params: dict[str, str | int] = {}


class ExtensionConfirmed(Event):
    """An operator confirmed an extension: it is payable like an order, at `price_usd_cents`, until `due_by`."""

    source = "support"
    type = "extension_confirmed"

    extension_id: str
    order_id: str
    account_id: str
    extra_days: int
    price_usd_cents: int
    due_by: datetime | None = None


class ExtensionPaid(Event):
    """An extension's payment settled: provisioning moves the rental's end."""

    source = "support"
    type = "extension_paid"

    extension_id: str
    order_id: str
    account_id: str
    extra_days: int


class ExtensionPaymentRefused(Event):
    """Support could not apply a settled payment to an extension (paid already, past its due date, the order
    over, or the rental refused it): payments credits it to the balance."""

    source = "support"
    type = "extension_payment_refused"

    extension_id: str
    order_id: str
    account_id: str
    payment_id: str
    amount_usd_cents: int
    reason: str


class ProvisioningStarted(Event):
    source = "provisioning"
    type = "provisioning_started"

    order_id: str
    account_id: str


class RentalReady(Event):
    """The node passed its readiness check and the access was handed over (never in the event: ask provisioning)."""

    source = "provisioning"
    type = "rental_ready"

    order_id: str
    account_id: str
    delivered_at: datetime
    starts_at: datetime
    ends_at: datetime


class ProvisioningFailed(Event):
    """No node could be delivered (none free, or every candidate failed its check): the order fails and is refunded."""

    source = "provisioning"
    type = "provisioning_failed"

    order_id: str
    account_id: str
    reason: str


class RentalEnding(Event):
    """Sent `hours_left` (24, then 1) hours before the end, with the advice to export results."""

    source = "provisioning"
    type = "rental_ending"

    order_id: str
    account_id: str
    ends_at: datetime
    hours_left: int


class RentalExtended(Event):
    source = "provisioning"
    type = "rental_extended"

    order_id: str
    account_id: str
    extension_id: str
    ends_at: datetime


class RentalExtensionRefused(Event):
    """A paid extension came for a rental that is over (ended or failed meanwhile): support refunds it."""

    source = "provisioning"
    type = "rental_extension_refused"

    order_id: str
    account_id: str
    extension_id: str
    reason: str


class RentalEnded(Event):
    """The term is over: keys revoked, processes stopped, files wiped, GPUs freed."""

    source = "provisioning"
    type = "rental_ended"

    order_id: str
    account_id: str
    ended_at: datetime


class TelegramLinkRequested(Event):
    """A customer asked for a Telegram deep link: notify binds the chat that presents the token (only its hash
    travels) before `expires_at`, and greets it in `language`."""

    source = "accounts"
    type = "telegram_link_requested"

    account_id: str
    token_hash: str
    expires_at: datetime
    language: str = "en"


def telegram_token_hash(token: str) -> str:
    """The `token_hash` of TelegramLinkRequested: the SHA-256, in hex, of the token the deep link carries."""
    return hashlib.sha256(token.encode()).hexdigest()


class TelegramUnlinkRequested(Event):
    """The customer unlinked Telegram from the account page: every chat of the account stops receiving."""

    source = "accounts"
    type = "telegram_unlink_requested"

    account_id: str


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
    PaymentInstructionsCreated,
    PaymentStatusChanged,
    BalanceDebited,
    SupportRequestOpened,
    SupportRequestAnswered,
    ExtensionConfirmed,
    ExtensionPaid,
    ExtensionPaymentRefused,
    ProvisioningStarted,
    RentalReady,
    ProvisioningFailed,
    RentalEnding,
    RentalExtended,
    RentalExtensionRefused,
    RentalEnded,
    TelegramLinkRequested,
    TelegramUnlinkRequested,
)
