"""A watcher's unit of work on plain objects (kernodeck_kit.memory), for one network: the scanner, the journal
and the runtime run here without a database, with the same answers as the SQL unit."""

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from kernodeck_contracts.statuses import TransferStatus
from kernodeck_kit.memory import MemoryUnit
from kernodeck_kit.units import MemoryUnits
from kernodeck_watchers.domain.blocks import BlockRef, Cursor
from kernodeck_watchers.domain.transfers import Tracked
from kernodeck_watchers.domain.watched import Live, Watch


@dataclass
class WatcherTables:
    watches: dict[str, Watch] = field(default_factory=dict)  # by address
    cursor: Cursor | None = None
    blocks: dict[int, str] = field(default_factory=dict)  # remembered block hash by height
    tracked: dict[tuple[str, int], Tracked] = field(default_factory=dict)  # by (txid, index)
    sequence: list[int] | None = None  # [epoch, last sequence]


class MemoryWatcher(MemoryUnit[WatcherTables]):
    def add_watches(self, watches: list[Watch]) -> None:
        for watch in watches:
            self.tables.watches.setdefault(watch.address, watch)

    def get_watch(self, address: str) -> Watch | None:
        return self.tables.watches.get(address)

    def watched_added_since(self, since: datetime, now: datetime) -> list[Live]:
        return [_live(w) for w in self.tables.watches.values() if w.watch_until > now and w.added_at >= since]

    def live_watches(self, now: datetime) -> Iterator[Live]:
        return iter([_live(w) for w in self.tables.watches.values() if w.watch_until > now])

    def watches_ended(self, start: datetime, end: datetime) -> list[str]:
        return [w.address for w in self.tables.watches.values() if start <= w.watch_until <= end]

    def watched_tokens(self, addresses: list[str]) -> set[tuple[str, str]]:
        watches = (self.tables.watches.get(address) for address in addresses)
        return {(w.address, w.token) for w in watches if w is not None and w.token is not None}

    def get_cursor(self, lock: bool = False) -> Cursor | None:
        return self.tables.cursor

    def save_cursor(self, cursor: Cursor, now: datetime) -> None:
        self.tables.cursor = cursor

    def add_scanned_block(self, block: BlockRef, keep: int) -> None:
        if block.height in self.tables.blocks:
            raise AssertionError(f"block {block.height} remembered twice")  # the SQL unit's primary key refuses it
        self.tables.blocks[block.height] = block.hash
        for height in [h for h in self.tables.blocks if h <= block.height - keep]:
            del self.tables.blocks[height]

    def scanned_blocks(self) -> list[tuple[int, str]]:
        return sorted(self.tables.blocks.items(), reverse=True)

    def scanned_hash(self, height: int) -> str | None:
        return self.tables.blocks.get(height)

    def scanned_hashes(self, heights: set[int]) -> dict[int, str]:
        return {height: self.tables.blocks[height] for height in heights if height in self.tables.blocks}

    def forget_blocks_above(self, height: int) -> list[str]:
        above = [h for h in self.tables.blocks if h > height]
        return [self.tables.blocks.pop(h) for h in above]

    def tracked_among(self, keys: set[tuple[str, int]]) -> dict[tuple[str, int], Tracked]:
        return {key: self.tables.tracked[key] for key in keys if key in self.tables.tracked}

    def tracked_in_state(self, state: TransferStatus) -> list[Tracked]:
        return [t for t in self.tables.tracked.values() if t.state == state]

    def tracked_in_blocks(self, hashes: list[str]) -> list[Tracked]:
        return [
            t for t in self.tables.tracked.values() if t.block_hash in hashes and t.state != TransferStatus.REVERTED
        ]

    def seen_in_blocks(self, addresses: list[str], height: int) -> dict[tuple[str, str | None], int]:
        seen: dict[tuple[str, str | None], int] = {}
        for t in self.tables.tracked.values():
            mined = t.block_height is not None and t.block_height <= height
            if t.address in addresses and mined and t.state != TransferStatus.REVERTED:
                seen[(t.address, t.token)] = seen.get((t.address, t.token), 0) + t.amount
        return seen

    def save_tracked(self, tracked: list[Tracked], now: datetime) -> None:
        for t in tracked:
            self.tables.tracked[(t.txid, t.index)] = t

    def lock_sequence(self) -> tuple[int, int]:
        epoch, value = self._sequence()
        return epoch, value

    def save_sequence(self, value: int) -> None:
        self._sequence()[1] = value

    def begin_epoch(self, now_ms: int) -> int:
        sequence = self._sequence()
        sequence[0] = max(sequence[0] + 1, now_ms)
        return sequence[0]

    def _sequence(self) -> list[int]:
        if self.tables.sequence is None:
            self.tables.sequence = [0, 0]
        return self.tables.sequence


def _live(watch: Watch) -> Live:
    return watch.address, watch.required_confirmations, watch.match_key


def memory_units() -> MemoryUnits:
    return MemoryUnits("chain", WatcherTables(), MemoryWatcher)
