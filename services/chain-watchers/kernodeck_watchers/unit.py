"""What a watcher's passes, looks and checks read and change in one transaction, on one network: the SQL unit
(store/unit.py) in the service, plain objects in tests. Its events leave with it (the kit's outbox)."""

from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

from kernodeck_contracts.events import Event
from kernodeck_contracts.statuses import TransferStatus
from kernodeck_watchers.domain.blocks import BlockRef, Cursor
from kernodeck_watchers.domain.transfers import Tracked
from kernodeck_watchers.domain.watched import Live, Watch


class WatcherUnit(Protocol):
    def emit(self, event: Event) -> None: ...

    # watched addresses
    def add_watches(self, watches: list[Watch]) -> None:
        """Each unless its address is watched already (a redelivery, another replica)."""

    def get_watch(self, address: str) -> Watch | None: ...
    def watched_added_since(self, since: datetime, now: datetime) -> list[Live]:
        """The live watches added since `since`."""

    def live_watches(self, now: datetime) -> Iterable[Live]:
        """Every live watch, read a chunk at a time: a million never sit in memory as rows beside the set."""

    def watches_ended(self, start: datetime, end: datetime) -> list[str]: ...
    def watched_tokens(self, addresses: list[str]) -> set[tuple[str, str]]:
        """(address, token) of the watches of these addresses that expect a token."""

    # the scanned chain
    def get_cursor(self, lock: bool = False) -> Cursor | None:
        """`lock`: no other replica moves it until the transaction ends."""

    def save_cursor(self, cursor: Cursor, now: datetime) -> None: ...
    def add_scanned_block(self, block: BlockRef, keep: int) -> None:
        """Remember `block` and forget those more than `keep` blocks below it."""

    def scanned_blocks(self) -> list[tuple[int, str]]:
        """The remembered blocks (height, hash), newest first."""

    def scanned_hash(self, height: int) -> str | None: ...
    def scanned_hashes(self, heights: set[int]) -> dict[int, str]: ...
    def forget_blocks_above(self, height: int) -> list[str]:
        """Drop the scanned blocks above `height`; their hashes."""

    # tracked transfers
    def tracked_among(self, keys: set[tuple[str, int]]) -> dict[tuple[str, int], Tracked]:
        """The stored transfers of these (txid, index) keys, by key."""

    def tracked_in_state(self, state: TransferStatus) -> list[Tracked]: ...
    def tracked_in_blocks(self, hashes: list[str]) -> list[Tracked]:
        """The live transfers recorded in any of these blocks."""

    def seen_in_blocks(self, addresses: list[str], height: int) -> dict[tuple[str, str | None], int]:
        """Per (address, token), what its live transfers brought in blocks up to `height`."""

    def save_tracked(self, tracked: list[Tracked], now: datetime) -> None:
        """Write these transfers as they are now, new or known."""

    # the event sequence
    def lock_sequence(self) -> tuple[int, int]:
        """The network's (epoch, last sequence), locked until the transaction ends: emitting transactions take
        turns."""

    def save_sequence(self, value: int) -> None: ...
    def begin_epoch(self, now_ms: int) -> int:
        """A new epoch for the events from now on: `now_ms`, or one more than the last if the clock says less."""
