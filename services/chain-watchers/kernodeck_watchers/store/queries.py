"""Reads and writes of the watcher's tables, one network at a time."""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func
from sqlmodel import Session, SQLModel, select

from kernodeck_kit.db import insert_for
from kernodeck_watchers.chains.base import BlockRef
from kernodeck_watchers.domain.transfers import State, Tracked
from kernodeck_watchers.store.tables import (
    ScanCursorRow,
    ScannedBlockRow,
    SequenceRow,
    TrackedTransferRow,
    WatchedAddressRow,
)


@dataclass(frozen=True)
class Cursor:
    height: int
    hash: str


def insert_missing(session: Session, rows: list[SQLModel], batch: int = 1000) -> None:
    """Insert each row unless its primary key is there already (a redelivery, another replica)."""
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        statement = insert_for(session, type(chunk[0]).__table__).values([row.model_dump() for row in chunk])
        session.execute(statement.on_conflict_do_nothing())


# --- watched addresses ----------------------------------------------------


Watch = tuple[str, int, str | None]  # (address, required confirmations, match key)
_WATCH = (WatchedAddressRow.address, WatchedAddressRow.required_confirmations, WatchedAddressRow.match_key)


def watched_added_since(session: Session, network: str, since: datetime, now: datetime) -> list[Watch]:
    """The live watches added since `since`."""
    query = select(*_WATCH).where(
        WatchedAddressRow.network == network, WatchedAddressRow.watch_until > now, WatchedAddressRow.added_at >= since
    )
    return [tuple(watch) for watch in session.exec(query)]


def live_watches(session: Session, network: str, now: datetime, chunk: int = 10_000) -> Iterator[Watch]:
    """Every live watch, read `chunk` rows at a time: a million watches never sit in memory as rows beside the
    set they fill."""
    query = select(*_WATCH).where(WatchedAddressRow.network == network, WatchedAddressRow.watch_until > now)
    yield from session.connection().execute(query.execution_options(stream_results=True, max_row_buffer=chunk))


def watches_ended(session: Session, network: str, start: datetime, end: datetime) -> list[str]:
    query = select(WatchedAddressRow.address).where(
        WatchedAddressRow.network == network,
        WatchedAddressRow.watch_until >= start,
        WatchedAddressRow.watch_until <= end,
    )
    return list(session.exec(query))


def watched_tokens(session: Session, network: str, addresses: list[str]) -> set[tuple[str, str]]:
    """(address, token) of the watches of these addresses that expect a token."""
    if not addresses:
        return set()
    query = select(WatchedAddressRow.address, WatchedAddressRow.token).where(
        WatchedAddressRow.network == network,
        WatchedAddressRow.address.in_(addresses),
        WatchedAddressRow.token.is_not(None),
    )
    return {(address, token) for address, token in session.exec(query)}


def get_watch(session: Session, network: str, address: str) -> WatchedAddressRow | None:
    return session.get(WatchedAddressRow, (network, address))


# --- the scanned chain ----------------------------------------------------


def get_cursor(session: Session, network: str, lock: bool = False) -> Cursor | None:
    query = select(ScanCursorRow).where(ScanCursorRow.network == network)
    row = session.exec(query.with_for_update() if lock else query).first()
    return None if row is None else Cursor(row.height, row.block_hash)


def save_cursor(session: Session, network: str, cursor: Cursor, now: datetime) -> None:
    row = session.get(ScanCursorRow, network) or ScanCursorRow(network=network, height=0, block_hash="", updated_at=now)
    row.height, row.block_hash, row.updated_at = cursor.height, cursor.hash, now
    session.add(row)


def add_scanned_block(session: Session, network: str, block: BlockRef, keep: int) -> None:
    """Remember `block` and forget those more than `keep` blocks below it."""
    session.add(ScannedBlockRow(network=network, height=block.height, hash=block.hash, parent_hash=block.parent_hash))
    session.execute(
        delete(ScannedBlockRow).where(ScannedBlockRow.network == network, ScannedBlockRow.height <= block.height - keep)
    )


def scanned_blocks(session: Session, network: str) -> list[tuple[int, str]]:
    """The remembered blocks, newest first."""
    query = (
        select(ScannedBlockRow.height, ScannedBlockRow.hash)
        .where(ScannedBlockRow.network == network)
        .order_by(ScannedBlockRow.height.desc())
    )
    return [(height, block_hash) for height, block_hash in session.exec(query)]


def scanned_hash(session: Session, network: str, height: int) -> str | None:
    row = session.get(ScannedBlockRow, (network, height))
    return None if row is None else row.hash


def scanned_hashes(session: Session, network: str, heights: set[int]) -> dict[int, str]:
    """The remembered blocks at these heights, hash by height: one query for them all."""
    if not heights:
        return {}
    query = select(ScannedBlockRow.height, ScannedBlockRow.hash).where(
        ScannedBlockRow.network == network, ScannedBlockRow.height.in_(heights)
    )
    return dict(session.exec(query).all())


def forget_blocks_above(session: Session, network: str, height: int) -> list[str]:
    """Drop the scanned blocks above `height`; their hashes."""
    above = (ScannedBlockRow.network == network, ScannedBlockRow.height > height)
    hashes = list(session.exec(select(ScannedBlockRow.hash).where(*above)))
    session.execute(delete(ScannedBlockRow).where(*above))
    return hashes


# --- tracked transfers ----------------------------------------------------


def tracked_among(session: Session, network: str, keys: set[tuple[str, int]]) -> dict[tuple[str, int], Tracked]:
    """The stored transfers of these (txid, index) keys, by key: one query for a block's or a look's transfers
    (the rest of their transactions' outputs read and left)."""
    if not keys:
        return {}
    query = select(TrackedTransferRow).where(
        TrackedTransferRow.network == network, TrackedTransferRow.txid.in_({txid for txid, _ in keys})
    )
    found = (_tracked(row) for row in session.exec(query))
    return {(tracked.txid, tracked.index): tracked for tracked in found if (tracked.txid, tracked.index) in keys}


def tracked_in_state(session: Session, network: str, state: State) -> list[Tracked]:
    query = select(TrackedTransferRow).where(TrackedTransferRow.network == network, TrackedTransferRow.state == state)
    return [_tracked(row) for row in session.exec(query)]


def tracked_in_blocks(session: Session, network: str, hashes: list[str]) -> list[Tracked]:
    """The live transfers recorded in any of these blocks."""
    if not hashes:
        return []
    query = select(TrackedTransferRow).where(
        TrackedTransferRow.network == network,
        TrackedTransferRow.block_hash.in_(hashes),
        TrackedTransferRow.state != State.REVERTED,
    )
    return [_tracked(row) for row in session.exec(query)]


def seen_in_blocks(
    session: Session, network: str, addresses: list[str], height: int
) -> dict[tuple[str, str | None], int]:
    """Per (address, token), what its live transfers brought in blocks up to `height` (token None: the network's
    own coin)."""
    if not addresses:
        return {}
    query = (
        select(TrackedTransferRow.address, TrackedTransferRow.token, func.sum(TrackedTransferRow.amount))
        .where(
            TrackedTransferRow.network == network,
            TrackedTransferRow.address.in_(addresses),
            TrackedTransferRow.block_height <= height,
            TrackedTransferRow.state != State.REVERTED,
        )
        .group_by(TrackedTransferRow.address, TrackedTransferRow.token)
    )
    return {(address, token): int(total) for address, token, total in session.exec(query)}


def save_tracked(session: Session, network: str, tracked: list[Tracked], now: datetime) -> None:
    """Write these transfers as they are now, new or known: one statement for them all (a block's confirmations
    in a round trip or a few, not a read and a write each)."""
    rows = [
        {
            "network": network,
            "txid": t.txid,
            "index": t.index,
            "address": t.address,
            "token": t.token,
            "amount": t.amount,
            "block_height": t.block_height,
            "block_hash": t.block_hash,
            "state": t.state.value,
            "confirmations": t.confirmations,
            "required_confirmations": t.required,
            "occurred_at": t.occurred_at,
            "updated_at": now,
        }
        for t in tracked
    ]
    if not rows:
        return
    key = ("network", "txid", "index")
    statement = insert_for(session, TrackedTransferRow.__table__)
    changed = {column: statement.excluded[column] for column in rows[0] if column not in key}
    # Many parameter sets to a statement compiled once, not one statement of many VALUES compiled for each.
    session.execute(statement.on_conflict_do_update(index_elements=list(key), set_=changed), rows)


def _tracked(row: TrackedTransferRow) -> Tracked:
    return Tracked(
        txid=row.txid,
        index=row.index,
        address=row.address,
        token=row.token,
        amount=row.amount,
        state=State(row.state),
        confirmations=row.confirmations,
        required=row.required_confirmations,
        occurred_at=row.occurred_at,
        block_height=row.block_height,
        block_hash=row.block_hash,
    )


# --- the event sequence ---------------------------------------------------


def lock_sequence(session: Session, network: str) -> tuple[int, int]:
    """The network's (epoch, last sequence), locked until the transaction ends: emitting transactions take turns."""
    row = _locked_sequence(session, network)
    return row.epoch, row.value


def save_sequence(session: Session, network: str, value: int) -> None:
    row = session.get(SequenceRow, network)
    row.value = value
    session.add(row)


def begin_epoch(session: Session, network: str, now_ms: int) -> int:
    """A new epoch for the events from now on: `now_ms`, or one more than the last if the clock says less."""
    row = _locked_sequence(session, network)
    row.epoch = max(row.epoch + 1, now_ms)
    session.add(row)
    return row.epoch


def _locked_sequence(session: Session, network: str) -> SequenceRow:
    query = select(SequenceRow).where(SequenceRow.network == network).with_for_update()
    row = session.exec(query).first()
    if row is None:  # the network's first event: the row is made once, whoever gets there first
        insert_missing(session, [SequenceRow(network=network, value=0, epoch=0)])
        row = session.exec(query).one()
    return row
