"""The watcher's tables. Every row names its network, so watchers may share one database."""

from datetime import datetime

from sqlalchemy import BigInteger, Index
from sqlmodel import Column, Field, SQLModel

from kernodeck_kit.types import BaseUnits, UtcDateTime


class WatchedAddressRow(SQLModel, table=True):
    __tablename__ = "watched_addresses"
    __table_args__ = (
        Index("ix_watched_addresses_network_added_at", "network", "added_at"),
        Index("ix_watched_addresses_network_watch_until", "network", "watch_until"),
    )

    network: str = Field(primary_key=True, max_length=16)
    address: str = Field(primary_key=True, max_length=128)  # normalized by the network's client
    # The address as the network's blocks also name it, as hex (Tron: its account id), computed once as the watch
    # is written so that loading the watched set decodes nothing; None where the network has no other form.
    match_key: str | None = Field(default=None, max_length=64)
    payment_id: str = Field(max_length=64)
    token: str | None = Field(default=None, max_length=128)
    watch_until: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    required_confirmations: int
    added_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class ScanCursorRow(SQLModel, table=True):
    """The newest block scanned; every block up to it is scanned."""

    __tablename__ = "scan_cursor"

    network: str = Field(primary_key=True, max_length=16)
    height: int = Field(sa_column=Column(BigInteger(), nullable=False))
    block_hash: str = Field(max_length=128)
    updated_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class ScannedBlockRow(SQLModel, table=True):
    """Recent scanned blocks, to find the common ancestor after a reorganisation."""

    __tablename__ = "scanned_blocks"

    network: str = Field(primary_key=True, max_length=16)
    height: int = Field(sa_column=Column(BigInteger(), primary_key=True))
    hash: str = Field(max_length=128)
    parent_hash: str = Field(max_length=128)


class TrackedTransferRow(SQLModel, table=True):
    __tablename__ = "tracked_transfers"
    __table_args__ = (
        Index("ix_tracked_transfers_network_state", "network", "state"),
        Index("ix_tracked_transfers_network_address", "network", "address"),
    )

    network: str = Field(primary_key=True, max_length=16)
    txid: str = Field(primary_key=True, max_length=128)
    index: int = Field(primary_key=True)
    address: str = Field(max_length=128)
    token: str | None = Field(default=None, max_length=128)
    amount: int = Field(sa_column=Column(BaseUnits(), nullable=False))
    block_height: int | None = Field(default=None, sa_column=Column(BigInteger(), nullable=True))
    block_hash: str | None = Field(default=None, max_length=128)
    state: str = Field(max_length=16)
    confirmations: int
    required_confirmations: int
    occurred_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    updated_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class SequenceRow(SQLModel, table=True):
    """The last `sequence` a network's watcher gave an event, in its `epoch` (see kernodeck_contracts' ChainTransfer)."""

    __tablename__ = "watcher_sequences"

    network: str = Field(primary_key=True, max_length=16)
    value: int = Field(sa_column=Column(BigInteger(), nullable=False))
    epoch: int = Field(default=0, sa_column=Column(BigInteger(), nullable=False, server_default="0"))
