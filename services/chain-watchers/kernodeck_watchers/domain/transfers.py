"""A transfer to a watched address through its life, and what each step announces.

Pure: every function takes what the watcher knew (`known`, None for a first
sighting) and what it sees now, and returns the new record with the kind of
event to emit (None: nothing to say). The scanner stores and emits.
"""

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from enum import StrEnum

from kernodeck_contracts.statuses import TransferStatus
from kernodeck_watchers.domain.blocks import BlockRef, SeenTransfer


class Kind(StrEnum):
    SEEN = "transfer_seen"
    CONFIRMATIONS = "transfer_confirmations"
    CONFIRMED = "transfer_confirmed"
    REVERTED = "transfer_reverted"


@dataclass(frozen=True)
class Tracked:
    txid: str
    index: int
    address: str
    token: str | None
    amount: int
    state: TransferStatus
    confirmations: int
    required: int
    occurred_at: datetime  # first mempool sighting or block time, whichever came first
    block_height: int | None = None
    block_hash: str | None = None

    @property
    def live(self) -> bool:
        return self.state != TransferStatus.REVERTED

    @property
    def in_mempool(self) -> bool:
        return self.state == TransferStatus.SEEN


def in_block(
    known: Tracked | None, seen: SeenTransfer, block: BlockRef, tip_height: int, required: int
) -> tuple[Tracked, Kind | None]:
    """`seen` is in `block`. A mempool transfer that got mined says nothing yet: `count` reports its confirmations."""
    block_time = datetime.fromtimestamp(block.time, UTC)
    if known is not None and known.live and known.block_hash == block.hash:
        return known, None
    if known is not None and known.in_mempool:
        mined = replace(
            known,
            state=TransferStatus.CONFIRMING,
            block_height=block.height,
            block_hash=block.hash,
            occurred_at=min(known.occurred_at, block_time),
        )
        return mined, None
    first = Tracked(
        txid=seen.txid,
        index=seen.index,
        address=seen.address,
        token=seen.token,
        amount=seen.amount,
        state=TransferStatus.CONFIRMING,
        confirmations=tip_height - block.height + 1,
        required=known.required if known else required,
        occurred_at=block_time if known is None else min(known.occurred_at, block_time),
        block_height=block.height,
        block_hash=block.hash,
    )
    return first, Kind.SEEN


def in_mempool(known: Tracked | None, seen: SeenTransfer, now: datetime, required: int) -> tuple[Tracked, Kind | None]:
    if known is not None and known.live:
        return known, None
    pending = Tracked(
        txid=seen.txid,
        index=seen.index,
        address=seen.address,
        token=seen.token,
        amount=seen.amount,
        state=TransferStatus.SEEN,
        confirmations=0,
        required=known.required if known else required,
        occurred_at=now if known is None else min(known.occurred_at, now),
    )
    return pending, Kind.SEEN


def reverted(known: Tracked) -> tuple[Tracked, Kind]:
    """Gone from the mempool without being mined, or in a block that is no longer on the best chain."""
    return replace(known, state=TransferStatus.REVERTED, confirmations=0), Kind.REVERTED


def count(known: Tracked, scanned_height: int) -> tuple[Tracked, Kind | None]:
    """Confirmations of a transfer in a block once the chain is scanned up to `scanned_height`. Never fewer than
    already told: a block is counted against the tip the node gave, and a pass may stop below it (a block not
    there yet); a reorganisation withdraws the transfers of the blocks it orphans."""
    if known.state != TransferStatus.CONFIRMING:
        return known, None
    confirmations = scanned_height - known.block_height + 1
    if confirmations >= known.required:
        return replace(known, state=TransferStatus.CONFIRMED, confirmations=confirmations), Kind.CONFIRMED
    if confirmations > known.confirmations:
        return replace(known, confirmations=confirmations), Kind.CONFIRMATIONS
    return known, None
