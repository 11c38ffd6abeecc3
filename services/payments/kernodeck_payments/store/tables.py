"""Intents, top-ups, transfers, address allocation, method switches, watcher reports, reviews."""

from datetime import datetime

from sqlalchemy import BigInteger
from sqlmodel import Column, Field, SQLModel, UniqueConstraint

from kernodeck_kit.types import BaseUnits, UtcDateTime, utcnow


def _at():
    return Field(sa_column=Column(UtcDateTime(), nullable=False))


def _maybe_at():
    return Field(default=None, sa_column=Column(UtcDateTime(), nullable=True))


class PaymentIntentRow(SQLModel, table=True):
    __tablename__ = "payment_intents"

    id: str = Field(primary_key=True, max_length=32)
    purpose: str = Field(max_length=16)
    account_id: str = Field(max_length=64, index=True)
    reference_id: str = Field(max_length=64, index=True)  # order id, top-up id or extension id
    order_id: str | None = Field(default=None, max_length=32)  # the order an extension's intent extends
    asset: str = Field(max_length=8)
    network: str = Field(max_length=16)
    address: str = Field(max_length=128)  # as shown to the customer (EIP-55 case on Ethereum)
    # One intent per address: the unique index refuses a reuse, whatever the spelling. (None only on intents of
    # an older release that gave a Solana pool address back to the pool; pool addresses are now given once.)
    address_key: str | None = Field(default=None, max_length=128, unique=True)
    derivation_index: int | None = None
    amount: int = Field(sa_column=Column(BaseUnits(), nullable=False))
    amount_usd_cents: int
    rate: str = Field(max_length=64)
    rate_source: str = Field(max_length=64)
    token: str | None = Field(default=None, max_length=128)
    required_confirmations: int
    status: str = Field(max_length=20, index=True)
    expires_at: datetime = _at()
    watch_until: datetime = _at()
    settled_at: datetime | None = _maybe_at()
    reported_at: datetime | None = _maybe_at()
    created_at: datetime = _at()
    updated_at: datetime = _at()


class TopupRow(SQLModel, table=True):
    __tablename__ = "topups"

    id: str = Field(primary_key=True, max_length=32)
    account_id: str = Field(max_length=64, index=True)
    amount_usd_cents: int
    created_at: datetime = _at()


class ChainTransferRow(SQLModel, table=True):
    __tablename__ = "chain_transfers"

    network: str = Field(primary_key=True, max_length=16)
    txid: str = Field(primary_key=True, max_length=128)
    index: int = Field(primary_key=True)
    address: str = Field(max_length=128, index=True)
    intent_id: str | None = Field(default=None, max_length=32, index=True)
    token: str | None = Field(default=None, max_length=128)
    amount: int = Field(sa_column=Column(BaseUnits(), nullable=False))
    confirmations: int = 0
    state: str = Field(max_length=12)
    sequence: int
    # The watcher database's epoch of the last event applied: (epoch, sequence) orders events across databases.
    epoch: int = Field(default=0, sa_column=Column(BigInteger(), nullable=False, server_default="0"))
    block_height: int | None = None
    block_hash: str | None = Field(default=None, max_length=128)
    disposition: str | None = Field(default=None, max_length=12)
    first_seen_at: datetime = _at()
    updated_at: datetime = _at()


class AddressCounter(SQLModel, table=True):
    __tablename__ = "address_counters"

    network: str = Field(primary_key=True, max_length=16)
    next_index: int = 0


class SolanaPoolAddress(SQLModel, table=True):
    __tablename__ = "solana_pool"

    address: str = Field(primary_key=True, max_length=64)
    intent_id: str | None = Field(default=None, max_length=32, unique=True)
    imported_at: datetime = _at()


class MethodSwitch(SQLModel, table=True):
    __tablename__ = "method_switches"

    asset: str = Field(primary_key=True, max_length=8)
    network: str = Field(primary_key=True, max_length=16)
    enabled: bool
    updated_by: str = Field(max_length=64)
    updated_at: datetime = _at()


class WatcherReport(SQLModel, table=True):
    __tablename__ = "watcher_reports"

    network: str = Field(primary_key=True, max_length=16)
    lagging: bool
    lag_blocks: int
    # Kinds of transfer the watcher cannot see (comma-separated, WatcherStatus.unseen): the method is degraded.
    unseen: str = Field(default="", max_length=128, sa_column_kwargs={"server_default": ""})
    reported_at: datetime = _at()


class ReviewItemRow(SQLModel, table=True):
    __tablename__ = "review_items"
    __table_args__ = (UniqueConstraint("key"),)

    id: str = Field(primary_key=True, max_length=32)
    key: str = Field(max_length=200)  # what caused it; the same cause never queues twice
    # Causes of one kind on one address (foreign-token dust) join the open item of their group, counted here.
    group_key: str | None = Field(default=None, max_length=200, index=True)
    transfers: int = Field(default=1, sa_column_kwargs={"server_default": "1"})
    reason: str = Field(max_length=64)
    status: str = Field(max_length=12, index=True)
    intent_id: str | None = Field(default=None, max_length=32)
    account_id: str | None = Field(default=None, max_length=64)
    transfer_key: str | None = Field(default=None, max_length=200)
    decision: str | None = Field(default=None, max_length=32)
    amount_usd_cents: int | None = None
    note: str = ""
    resolved_by: str | None = Field(default=None, max_length=64)
    created_at: datetime = _at()
    resolved_at: datetime | None = _maybe_at()


class ReviewAudit(SQLModel, table=True):
    __tablename__ = "review_audit"

    id: int | None = Field(default=None, primary_key=True)
    review_id: str = Field(max_length=32, index=True)
    actor: str = Field(max_length=64)
    action: str = Field(max_length=32)
    detail: str = ""
    at: datetime = Field(default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False))


class PayableOrderRow(SQLModel, table=True):
    """Payments' copy of an order, from orders' events (domain/orders.py)."""

    __tablename__ = "payable_orders"

    order_id: str = Field(primary_key=True, max_length=32)
    account_id: str = Field(max_length=64)
    status: str = Field(max_length=32)
    status_at: datetime = _at()  # when orders set that status
    total_usd_cents: int | None = None
    expires_at: datetime | None = _maybe_at()
    model_id: str | None = Field(default=None, max_length=32)
    total_gpus: int | None = None
    ssh_key_given: bool | None = None  # None: not known (the order came before payments kept this)


class PayableExtensionRow(SQLModel, table=True):
    """Payments' copy of a confirmed extension, from support's events (domain/extensions.py)."""

    __tablename__ = "payable_extensions"

    extension_id: str = Field(primary_key=True, max_length=32)
    order_id: str = Field(max_length=32)
    account_id: str = Field(max_length=64)
    price_usd_cents: int
    due_by: datetime = _at()
    paid: bool = False
