"""The watcher's SQL unit (unit.WatcherUnit): reads and writes of its tables for one network, on a kit
transaction."""

from collections.abc import Iterator
from datetime import datetime

from sqlalchemy import delete, func
from sqlmodel import Session, SQLModel, select

from kernodeck_contracts.statuses import TransferStatus
from kernodeck_kit.db import insert_for
from kernodeck_kit.outbox import Store, Tx
from kernodeck_kit.units import SqlUnit, SqlUnits
from kernodeck_watchers.domain.blocks import BlockRef, Cursor
from kernodeck_watchers.domain.transfers import Tracked
from kernodeck_watchers.domain.watched import Live, Watch
from kernodeck_watchers.store.tables import (
    ScanCursorRow,
    ScannedBlockRow,
    SequenceRow,
    TrackedTransferRow,
    WatchedAddressRow,
)

_LIVE = (WatchedAddressRow.address, WatchedAddressRow.required_confirmations, WatchedAddressRow.match_key)


def watcher_units(store: Store, network: str) -> SqlUnits:
    """The network's units on the watcher's database."""
    return SqlUnits(store, lambda tx: SqlWatcher(tx, network))


def insert_missing(session: Session, rows: list[SQLModel], batch: int = 1000) -> None:
    """Insert each row unless its primary key is there already (a redelivery, another replica)."""
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        statement = insert_for(session, type(chunk[0]).__table__).values([row.model_dump() for row in chunk])
        session.execute(statement.on_conflict_do_nothing())


class SqlWatcher(SqlUnit):
    def __init__(self, tx: Tx, network: str):
        super().__init__(tx)
        self.network = network

    # --- watched addresses ----------------------------------------------------

    def add_watches(self, watches: list[Watch]) -> None:
        insert_missing(self.session, [WatchedAddressRow(network=self.network, **w.__dict__) for w in watches])

    def get_watch(self, address: str) -> Watch | None:
        row = self.session.get(WatchedAddressRow, (self.network, address))
        return None if row is None else Watch(**row.model_dump(exclude={"network"}))

    def watched_added_since(self, since: datetime, now: datetime) -> list[Live]:
        query = select(*_LIVE).where(
            WatchedAddressRow.network == self.network,
            WatchedAddressRow.watch_until > now,
            WatchedAddressRow.added_at >= since,
        )
        return [tuple(watch) for watch in self.session.exec(query)]

    def live_watches(self, now: datetime, chunk: int = 10_000) -> Iterator[Live]:
        query = select(*_LIVE).where(WatchedAddressRow.network == self.network, WatchedAddressRow.watch_until > now)
        yield from self.session.connection().execute(query.execution_options(stream_results=True, max_row_buffer=chunk))

    def watches_ended(self, start: datetime, end: datetime) -> list[str]:
        query = select(WatchedAddressRow.address).where(
            WatchedAddressRow.network == self.network,
            WatchedAddressRow.watch_until >= start,
            WatchedAddressRow.watch_until <= end,
        )
        return list(self.session.exec(query))

    def watched_tokens(self, addresses: list[str]) -> set[tuple[str, str]]:
        if not addresses:
            return set()
        query = select(WatchedAddressRow.address, WatchedAddressRow.token).where(
            WatchedAddressRow.network == self.network,
            WatchedAddressRow.address.in_(addresses),
            WatchedAddressRow.token.is_not(None),
        )
        return {(address, token) for address, token in self.session.exec(query)}

    # --- the scanned chain ----------------------------------------------------

    def get_cursor(self, lock: bool = False) -> Cursor | None:
        query = select(ScanCursorRow).where(ScanCursorRow.network == self.network)
        row = self.session.exec(query.with_for_update() if lock else query).first()
        return None if row is None else Cursor(row.height, row.block_hash)

    def save_cursor(self, cursor: Cursor, now: datetime) -> None:
        row = self.session.get(ScanCursorRow, self.network) or ScanCursorRow(
            network=self.network, height=0, block_hash="", updated_at=now
        )
        row.height, row.block_hash, row.updated_at = cursor.height, cursor.hash, now
        self.session.add(row)

    def add_scanned_block(self, block: BlockRef, keep: int) -> None:
        self.session.add(
            ScannedBlockRow(network=self.network, height=block.height, hash=block.hash, parent_hash=block.parent_hash)
        )
        self.session.execute(
            delete(ScannedBlockRow).where(
                ScannedBlockRow.network == self.network, ScannedBlockRow.height <= block.height - keep
            )
        )

    def scanned_blocks(self) -> list[tuple[int, str]]:
        query = (
            select(ScannedBlockRow.height, ScannedBlockRow.hash)
            .where(ScannedBlockRow.network == self.network)
            .order_by(ScannedBlockRow.height.desc())
        )
        return [(height, block_hash) for height, block_hash in self.session.exec(query)]

    def scanned_hash(self, height: int) -> str | None:
        row = self.session.get(ScannedBlockRow, (self.network, height))
        return None if row is None else row.hash

    def scanned_hashes(self, heights: set[int]) -> dict[int, str]:
        """One query for them all."""
        if not heights:
            return {}
        query = select(ScannedBlockRow.height, ScannedBlockRow.hash).where(
            ScannedBlockRow.network == self.network, ScannedBlockRow.height.in_(heights)
        )
        return dict(self.session.exec(query).all())

    def forget_blocks_above(self, height: int) -> list[str]:
        above = (ScannedBlockRow.network == self.network, ScannedBlockRow.height > height)
        hashes = list(self.session.exec(select(ScannedBlockRow.hash).where(*above)))
        self.session.execute(delete(ScannedBlockRow).where(*above))
        return hashes

    # --- tracked transfers ----------------------------------------------------

    def tracked_among(self, keys: set[tuple[str, int]]) -> dict[tuple[str, int], Tracked]:
        """One query for a block's or a look's transfers (the rest of their transactions' outputs read and left)."""
        if not keys:
            return {}
        query = select(TrackedTransferRow).where(
            TrackedTransferRow.network == self.network, TrackedTransferRow.txid.in_({txid for txid, _ in keys})
        )
        found = (_tracked(row) for row in self.session.exec(query))
        return {(tracked.txid, tracked.index): tracked for tracked in found if (tracked.txid, tracked.index) in keys}

    def tracked_in_state(self, state: TransferStatus) -> list[Tracked]:
        query = select(TrackedTransferRow).where(
            TrackedTransferRow.network == self.network, TrackedTransferRow.state == state
        )
        return [_tracked(row) for row in self.session.exec(query)]

    def tracked_in_blocks(self, hashes: list[str]) -> list[Tracked]:
        if not hashes:
            return []
        query = select(TrackedTransferRow).where(
            TrackedTransferRow.network == self.network,
            TrackedTransferRow.block_hash.in_(hashes),
            TrackedTransferRow.state != TransferStatus.REVERTED,
        )
        return [_tracked(row) for row in self.session.exec(query)]

    def seen_in_blocks(self, addresses: list[str], height: int) -> dict[tuple[str, str | None], int]:
        """Token None: the network's own coin."""
        if not addresses:
            return {}
        query = (
            select(TrackedTransferRow.address, TrackedTransferRow.token, func.sum(TrackedTransferRow.amount))
            .where(
                TrackedTransferRow.network == self.network,
                TrackedTransferRow.address.in_(addresses),
                TrackedTransferRow.block_height <= height,
                TrackedTransferRow.state != TransferStatus.REVERTED,
            )
            .group_by(TrackedTransferRow.address, TrackedTransferRow.token)
        )
        return {(address, token): int(total) for address, token, total in self.session.exec(query)}

    def save_tracked(self, tracked: list[Tracked], now: datetime) -> None:
        """One statement for them all (a block's confirmations in a round trip or a few, not a read and a write
        each)."""
        rows = [
            {
                "network": self.network,
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
        statement = insert_for(self.session, TrackedTransferRow.__table__)
        changed = {column: statement.excluded[column] for column in rows[0] if column not in key}
        # Many parameter sets to a statement compiled once, not one statement of many VALUES compiled for each.
        self.session.execute(statement.on_conflict_do_update(index_elements=list(key), set_=changed), rows)

    # --- the event sequence ---------------------------------------------------

    def lock_sequence(self) -> tuple[int, int]:
        row = self._locked_sequence()
        return row.epoch, row.value

    def save_sequence(self, value: int) -> None:
        row = self.session.get(SequenceRow, self.network)
        row.value = value
        self.session.add(row)

    def begin_epoch(self, now_ms: int) -> int:
        row = self._locked_sequence()
        row.epoch = max(row.epoch + 1, now_ms)
        self.session.add(row)
        return row.epoch

    def _locked_sequence(self) -> SequenceRow:
        query = select(SequenceRow).where(SequenceRow.network == self.network).with_for_update()
        row = self.session.exec(query).first()
        if row is None:  # the network's first event: the row is made once, whoever gets there first
            insert_missing(self.session, [SequenceRow(network=self.network, value=0, epoch=0)])
            row = self.session.exec(query).one()
        return row


def _tracked(row: TrackedTransferRow) -> Tracked:
    return Tracked(
        txid=row.txid,
        index=row.index,
        address=row.address,
        token=row.token,
        amount=row.amount,
        state=TransferStatus(row.state),
        confirmations=row.confirmations,
        required=row.required_confirmations,
        occurred_at=row.occurred_at,
        block_height=row.block_height,
        block_hash=row.block_hash,
    )
