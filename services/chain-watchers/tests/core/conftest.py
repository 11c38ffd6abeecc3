"""The core's unit tests: the scanner over an in-memory node (FakeChain) and the watcher's unit on plain
objects (tests/memory.py). Tests reach the fake and the helpers through fixtures."""

import hashlib
import itertools
from collections.abc import Callable, Collection, Container
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_watchers.chains.base import BlockRef, NodeError, SeenTransfer
from kernodeck_watchers.domain.progress import Progress
from kernodeck_watchers.domain.watched import WatchedAddresses
from kernodeck_watchers.scanner import Scanner

GENESIS_TIME = 1_700_000_000
_salt = itertools.count()


@dataclass
class FakeBlock:
    ref: BlockRef
    transfers: list[SeenTransfer] = field(default_factory=list)


class FakeChain:
    network = "bitcoin"
    unseen: frozenset[str] = frozenset()

    def __init__(self, height: int = 100):
        self.best: list[FakeBlock] = []
        self.known: dict[str, FakeBlock] = {}  # every block ever made, orphaned ones too
        self.mempool: list[SeenTransfer] = []
        self.down = False
        self.then: dict[str, Callable[[], None]] = {}  # call -> what happens once right after it answers
        self.calls: list[str] = []
        self.unseen_balance: dict[str, int] = {}  # address -> what it holds beyond its transfers (or less: swept)
        for _ in range(height + 1):
            self.mine()

    # --- driving the chain ---------------------------------------------------

    def send(self, transfer: SeenTransfer) -> SeenTransfer:
        self.mempool.append(transfer)
        return transfer

    def drop(self, txid: str) -> None:
        self.mempool = [t for t in self.mempool if t.txid != txid]

    def mine(self, *transfers: SeenTransfer, time: int | None = None) -> BlockRef:
        """A block on the tip with `transfers` (and whatever waits in the mempool unless transfers are given)."""
        included = list(transfers) if transfers else list(self.mempool)
        mined = {t.txid for t in included}
        self.mempool = [t for t in self.mempool if t.txid not in mined]
        parent = self.best[-1].ref if self.best else None
        height = parent.height + 1 if parent else 0
        block_hash = hashlib.sha256(f"{height}:{next(_salt)}".encode()).hexdigest()
        ref = BlockRef(height, block_hash, parent.hash if parent else "", time or GENESIS_TIME + 600 * height)
        self.best.append(FakeBlock(ref, included))
        self.known[block_hash] = self.best[-1]
        return ref

    def orphan(self, depth: int) -> list[FakeBlock]:
        """Take the newest `depth` blocks off the best chain (their transfers do not come back by themselves)."""
        gone, self.best = self.best[-depth:], self.best[:-depth]
        return gone

    def reorg(self, depth: int, *blocks: list[SeenTransfer]) -> None:
        """Replace the newest `depth` blocks by `blocks`, each given as its transfers."""
        self.orphan(depth)
        for transfers in blocks:
            if transfers:
                self.mine(*transfers)
            else:
                self.mine_empty()

    def mine_empty(self, count: int = 1) -> BlockRef:
        """`count` blocks that leave the mempool as it is."""
        kept, self.mempool = self.mempool, []
        for _ in range(count):
            ref = self.mine()
        self.mempool = kept
        return ref

    @property
    def height(self) -> int:
        return self.best[-1].ref.height

    # --- ChainClient -----------------------------------------------------------

    def normalize(self, address: str) -> str:
        return address.lower()

    def tip(self) -> BlockRef:
        self._answer("tip")
        ref = self.best[-1].ref
        self._then("tip")
        return ref

    def block(self, height: int) -> BlockRef:
        self._answer("block")
        if height > self.height:
            raise NodeError(f"no block at {height}")
        ref = self.best[height].ref
        self._then("block")
        return ref

    def block_hash(self, height: int) -> str:
        self._answer("block_hash")
        if height > self.height:
            raise NodeError(f"no block at {height}")
        block_hash = self.best[height].ref.hash
        self._then("block_hash")
        return block_hash

    def transfers_in_block(self, block: BlockRef, watched: Container[str]) -> list[SeenTransfer]:
        self._answer("transfers_in_block")
        return [t for t in self.known[block.hash].transfers if t.address in watched]

    def pending_transfers(self, watched: Container[str]) -> list[SeenTransfer]:
        self._answer("pending_transfers")
        return [t for t in self.mempool if t.address in watched]

    def balances(self, addresses: list[str], height: int) -> dict[str, int]:
        self._answer("balances")
        held = {address: self.unseen_balance.get(address, 0) for address in addresses}
        for block in self.best:
            for t in block.transfers:
                if t.address in held and t.token is None:
                    held[t.address] += t.amount
        return held

    def address_activity(
        self, addresses: Collection[str], since_height: int
    ) -> list[tuple[SeenTransfer, BlockRef | None]]:
        self._answer("address_activity")
        found: list[tuple[SeenTransfer, BlockRef | None]] = [(t, None) for t in self.mempool if t.address in addresses]
        for block in self.best[since_height:]:
            found += [(t, block.ref) for t in block.transfers if t.address in addresses]
        self._then("address_activity")
        return found

    def _then(self, call: str) -> None:
        change = self.then.pop(call, None)
        if change is not None:
            change()

    def _answer(self, call: str) -> None:
        if self.down:
            raise NodeError(f"{call}: the node cannot be reached")
        self.calls.append(call)


_txids = itertools.count(1)


def transfer(address: str, amount: int, index: int = 0, txid: str | None = None) -> SeenTransfer:
    return SeenTransfer(txid or f"{next(_txids):064x}", index, address, None, amount)


# --- fixtures ------------------------------------------------------------------


class Clock:
    """The scanner's clock, moved by hand."""

    def __init__(self):
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


@pytest.fixture
def chain() -> FakeChain:
    return FakeChain()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def watched() -> WatchedAddresses:
    """The watched set the scanner matches against; 3 confirmations unless an address says otherwise."""
    return WatchedAddresses(default_required=3)


@pytest.fixture
def make_scanner(units, chain, watched, clock):
    """`make_scanner(**overrides)` -> a Scanner over the fake chain (a new one is a restarted watcher)."""

    def make(**overrides) -> Scanner:
        fields = {
            "units": units,
            "client": chain,
            "watched": watched,
            "progress": Progress(since=clock()),
            "history_blocks": 20,
            "clock": clock,
        }
        return Scanner(**{**fields, **overrides})

    return make


@pytest.fixture
def pay():
    """`pay(address, amount, index=0, txid=None)` -> a SeenTransfer with a fresh txid."""
    return transfer
