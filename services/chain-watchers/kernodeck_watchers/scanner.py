"""One pass of the active watcher: roll back what a reorganisation orphaned, scan every new block in
order, count confirmations, then settle the mempool.

Each block is committed with its events and the cursor in one transaction,
so a watcher that stops anywhere resumes at the next unscanned block and
emits nothing twice.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from kernodeck_contracts.statuses import TransferStatus
from kernodeck_kit.types import utcnow
from kernodeck_kit.units import Units
from kernodeck_watchers import metrics
from kernodeck_watchers.chains.base import BlockNotYet, BlockRef, ChainClient, SeenTransfer
from kernodeck_watchers.domain import transfers
from kernodeck_watchers.domain.blocks import Cursor
from kernodeck_watchers.domain.progress import Progress
from kernodeck_watchers.domain.reorg import common_ancestor
from kernodeck_watchers.domain.transfers import Kind, Tracked
from kernodeck_watchers.domain.watched import WatchedAddresses
from kernodeck_watchers.journal import Journal, journal
from kernodeck_watchers.unit import WatcherUnit

log = logging.getLogger(__name__)

Change = tuple[Tracked, Kind]


class ReorgTooDeep(Exception):
    """None of the remembered blocks is on the node's best chain: no pass goes on (nor guesses) until one is."""


class CursorMoved(Exception):
    """Another replica scanned meanwhile (it took the lock while this one lost it): this pass stops."""


@dataclass
class Scanner:
    units: Units[WatcherUnit]
    client: ChainClient
    watched: WatchedAddresses
    progress: Progress
    history_blocks: int
    start_height: int | None = None
    tip_delay: int = 0  # blocks below the node's tip where the scan stops
    clock: Callable[[], datetime] = utcnow

    @property
    def network(self) -> str:
        return self.client.network

    def run(self) -> None:
        # The mempool is read before the tip: a transfer that left it by being
        # mined is then in a block this pass scans, not taken for a dropped one.
        mempool_read_at = self.clock()
        pending = self.client.pending_transfers(self.watched.addresses)
        tip = self.client.tip()
        target = max(tip.height - self.tip_delay, 0)  # read a little behind a provider's racing tip
        cursor = self._cursor(tip, target)
        # Both at once, so that a status published meanwhile never compares the tip with nothing scanned.
        self.progress.node_answered(target)
        self.progress.scanned(cursor.height, self.clock())
        if cursor.height >= tip.height:
            cursor = self._tip_not_ahead(cursor, tip)
        try:
            while cursor.height < target:
                block = self.client.block(cursor.height + 1)
                if block.parent_hash != cursor.hash:
                    cursor = self._rewind(cursor, tip)
                else:
                    found = self.client.transfers_in_block(block, self.watched.addresses)
                    cursor = self._commit_block(cursor, block, found, target)
                self.progress.scanned(cursor.height, self.clock())
        except BlockNotYet as error:  # the next pass goes on from the last committed block
            log.info("the node has no block there yet", extra={"network": self.network, "error": str(error)})
        else:
            self.progress.tip_reached(cursor.height, self.clock())
        self._count(cursor)
        self._settle_mempool(pending, mempool_read_at)

    def _tip_not_ahead(self, cursor: Cursor, tip: BlockRef) -> Cursor:
        """The node's tip at or below the cursor. A different block at the tip's height is a reorganisation;
        the same block (or one older than those remembered) is a node behind the chain scanned, such as a
        load-balanced provider's lagging backend: nothing scanned is withdrawn for that."""
        with self.units.transaction() as unit:
            remembered = unit.scanned_hash(tip.height)
        if remembered is not None and remembered != tip.hash:
            cursor = self._rewind(cursor, tip)
            self.progress.scanned(cursor.height, self.clock())
        elif cursor.height > tip.height:
            log.info(
                "the node is behind the scanned chain: waiting for it",
                extra={"network": self.network, "node_height": tip.height, "scanned_height": cursor.height},
            )
        return cursor

    def _cursor(self, tip: BlockRef, target: int) -> Cursor:
        with self.units.transaction() as unit:
            cursor = unit.get_cursor()
        if cursor is not None:
            return cursor
        if self.start_height is not None:
            start = self.client.block(max(self.start_height - 1, 0))
        elif target == tip.height:
            start = tip
        else:
            try:
                start = self.client.block(target)
            except BlockNotYet:  # a backend that lacks it yet: the first scan starts after the tip instead
                start = tip
        with self.units.transaction() as unit:
            unit.add_scanned_block(start, self.history_blocks)
            unit.save_cursor(Cursor(start.height, start.hash), self.clock())
        log.info("first scan", extra={"network": self.network, "after_height": start.height})
        return Cursor(start.height, start.hash)

    def _commit_block(self, cursor: Cursor, block: BlockRef, found: list[SeenTransfer], tip_height: int) -> Cursor:
        with journal(self.units, self.network, self.clock()) as entry:
            self._check(entry, cursor)
            entry.load({(seen.txid, seen.index) for seen in found})
            for seen in found:
                known = entry.known(seen.txid, seen.index)
                entry.record(*transfers.in_block(known, seen, block, tip_height, self._required(seen)))
            entry.unit.add_scanned_block(block, self.history_blocks)
            moved = Cursor(block.height, block.hash)
            entry.unit.save_cursor(moved, entry.now)
            if block.height == tip_height:
                # The pass's last block: the confirmations it brings go out with it, in its transaction, rather
                # than in two more (a read, then a journal of their own) before the payment can settle.
                self._count_in(entry, block.height)
        return moved

    @staticmethod
    def _count_in(entry: Journal, height: int) -> None:
        """Confirmations at `height` of the transfers confirming, as this journal has them (stored, or recorded
        in it)."""
        confirming = {
            (known.txid, known.index): known for known in entry.unit.tracked_in_state(TransferStatus.CONFIRMING)
        }
        confirming.update(entry.saved)  # read once: a busy block's hundreds, not a query each
        for known in confirming.values():
            tracked, kind = transfers.count(known, height)
            if kind is not None:
                entry.record(tracked, kind)

    def _rewind(self, cursor: Cursor, tip: BlockRef) -> Cursor:
        """Back to the newest scanned block still on the best chain, withdrawing what the orphaned blocks held."""
        with self.units.transaction() as unit:
            remembered = unit.scanned_blocks()
        found = common_ancestor(
            remembered, lambda height: self.client.block_hash(height) if height <= tip.height else None
        )
        if found is None:
            raise ReorgTooDeep(f"{self.network}: no remembered block below {cursor.height} is on the best chain")
        ancestor = Cursor(*found)
        with journal(self.units, self.network, self.clock()) as entry:
            self._check(entry, cursor)
            orphaned = entry.unit.forget_blocks_above(ancestor.height)
            for known in entry.unit.tracked_in_blocks(orphaned):
                entry.record(*transfers.reverted(known))
            entry.unit.save_cursor(ancestor, entry.now)
        metrics.REORGS.labels(self.network).inc()
        log.warning(
            "reorganisation rolled back",
            extra={"network": self.network, "from_height": cursor.height, "to_height": ancestor.height},
        )
        return ancestor

    def recount(self) -> None:
        """Confirmations at the scanned height again, for transfers recorded since `run` counted (a look at new
        watches finds some in blocks scanned before they were watched)."""
        with self.units.transaction() as unit:
            cursor = unit.get_cursor()
        if cursor is not None:
            self._count(cursor)

    def _count(self, cursor: Cursor) -> None:
        def counted(unit: WatcherUnit, now: datetime) -> list[Change]:
            found = (
                transfers.count(known, cursor.height) for known in unit.tracked_in_state(TransferStatus.CONFIRMING)
            )
            return [(tracked, kind) for tracked, kind in found if kind is not None]

        self._record(counted, cursor)

    def _settle_mempool(self, pending: list[SeenTransfer], read_at: datetime) -> None:
        """New mempool transfers are seen; tracked ones no longer there, and not mined, were dropped or replaced."""
        still = {(seen.txid, seen.index) for seen in pending}

        def settled(unit: WatcherUnit, now: datetime) -> list[Change]:
            changes = []
            stored = unit.tracked_among(still)
            for seen in pending:
                known = stored.get((seen.txid, seen.index))
                noticed, kind = transfers.in_mempool(known, seen, now, self._required(seen))
                if kind is not None:
                    changes.append((noticed, kind))
            for known in unit.tracked_in_state(TransferStatus.SEEN):
                # Judged only on what the read looked for: not an address whose watch ended, nor one
                # first noticed after the read (by "J'ai payé").
                looked_for = known.address in self.watched.addresses and known.occurred_at < read_at
                if looked_for and (known.txid, known.index) not in still:
                    changes.append(transfers.reverted(known))
            return changes

        self._record(settled)

    def _record(self, changes: Callable[[WatcherUnit, datetime], list[Change]], cursor: Cursor | None = None) -> None:
        """What `changes` finds, judged again under the journal's lock; most passes find nothing, and then take no
        turn on the sequence."""
        with self.units.transaction() as unit:
            if not changes(unit, self.clock()):
                return
        with journal(self.units, self.network, self.clock()) as entry:
            if cursor is not None:
                self._check(entry, cursor)
            for tracked, kind in changes(entry.unit, entry.now):
                entry.record(tracked, kind)

    def _required(self, seen: SeenTransfer) -> int:
        return self.watched.required(seen.address)

    def _check(self, entry: Journal, expected: Cursor) -> None:
        if entry.unit.get_cursor(lock=True) != expected:
            raise CursorMoved(f"{self.network}: the cursor moved under this pass")
