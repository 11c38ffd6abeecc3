"""The chain the double serves: LiteSVM executes transactions, the ledger makes slots and blocks of them.

LiteSVM is a real SVM (System, Token, Token-2022, associated token, lookup
table programs) with one state and no blocks. The ledger adds what a
validator's ledger has: transactions queue until the next block is produced,
then execute in order; only those the runtime commits (executed, fee charged,
even if an instruction failed) enter the block. Slots advance one per block,
and a slot can be skipped (no block). Blockhashes chain (each one hashes its
parent's), a transaction's recent blockhash must be one of the last 151, and
commitment levels trail the newest block by a number of blocks.

Every state change goes through a recorded transaction (the faucet is funded
at genesis), so an account's balance at an older slot is read back from the
pre/post balances of the transactions that touched it.
"""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from solders.account import Account
from solders.clock import Clock
from solders.hash import Hash
from solders.keypair import Keypair
from solders.litesvm import LiteSVM
from solders.pubkey import Pubkey
from solders.system_program import ID as SYSTEM_PROGRAM
from solders.transaction import VersionedTransaction

from .runtime import Executed, Failure, execute, simulate
from .traffic import Traffic
from .wallet import system_transfer

LAMPORTS_PER_SOL = 1_000_000_000
FAUCET_LAMPORTS = 500_000_000 * LAMPORTS_PER_SOL
MAX_PROCESSING_AGE = 150  # blocks a recent blockhash stays usable (agave's MAX_PROCESSING_AGE)
MAX_SLOT_HASHES = 512  # entries in the SlotHashes sysvar
COMMITMENTS = ("processed", "confirmed", "finalized")
DEPTHS = {"processed": 0, "confirmed": 1, "finalized": 31}  # blocks each commitment trails the newest block


@dataclass
class Block:
    slot: int
    parent_slot: int
    blockhash: str
    previous_blockhash: str
    block_time: int
    block_height: int
    txs: list[Executed]
    traffic: Traffic | None = None  # the rest of the cluster's transactions, after `txs`


class Ledger:
    """Not thread-safe: the RPC layer serializes access."""

    def __init__(
        self, on_slot: Callable[[int, int, int], None] = lambda slot, parent, root: None, traffic: Traffic | None = None
    ):
        self.on_slot = on_slot  # each produced block's slot, its parent's and the root's (finalized)
        self.traffic = traffic  # mainnet-size blocks: every produced block carries it
        self.faucet = Keypair()
        self.svm = self._genesis_svm()
        self.blocks: dict[int, Block] = {}
        self.slots: list[int] = []  # produced slots, ascending
        self.next_slot = 0
        self.queue: list[VersionedTransaction] = []
        self.by_signature: dict[str, tuple[int, int]] = {}  # -> (slot, position in block)
        self.by_address: dict[str, list[tuple[int, int]]] = defaultdict(list)
        self._root = 0  # index in `slots` of the newest finalized block; it never moves back
        self._genesis_time = int(time.time())
        self._append_block([], self._genesis_time)  # slot 0
        self._open_bank()

    # ----------------------------------------------------------- slots --
    def slot_at(self, commitment: str) -> int:
        """The newest produced slot the commitment level allows."""
        return self.slots[max(self._root, len(self.slots) - 1 - DEPTHS[commitment])]

    def block_at(self, commitment: str) -> Block:
        return self.blocks[self.slot_at(commitment)]

    def status_of(self, slot: int) -> str:
        """The highest commitment level a produced slot has reached."""
        return next((level for level in ("finalized", "confirmed") if slot <= self.slot_at(level)), "processed")

    def produce_blocks(self, count: int) -> None:
        """Produce `count` blocks at the next slots; the first one takes the queued transactions."""
        for _ in range(count):
            queued, self.queue = self.queue, []
            executed = [e for tx in queued if self._blockhash_is_recent(tx) and (e := execute(self.svm, tx))]
            self._append_block(executed, self.svm.get_clock().unix_timestamp)
            self._open_bank()

    def skip_slots(self, count: int) -> None:
        """The next `count` slots get no block, as when their leaders produced none."""
        self.next_slot += count
        self._open_bank()

    def drop_blocks(self, count: int) -> None:
        """Abandon the newest `count` blocks as a minority fork: their slots become skipped and their
        transactions are gone. Finalized blocks cannot be dropped."""
        keep = len(self.slots) - count
        if count < 0 or keep <= self._root:
            raise ValueError(f"cannot drop {count} blocks: finalized blocks are final")
        dropped = self.slots[keep:]
        for slot in dropped:
            for e in self.blocks.pop(slot).txs:
                del self.by_signature[e.signature]
                for key in e.account_keys:
                    self.by_address[key] = [(s, p) for s, p in self.by_address[key] if s < dropped[0]]
        del self.slots[keep:]
        self.svm = self._genesis_svm()
        for slot in self.slots:
            block = self.blocks[slot]
            self._set_clock(slot, block.block_time)
            for e in block.txs:
                self.svm.send_transaction(e.tx)
        self._open_bank()

    # ---------------------------------------------------- transactions --
    def submit(self, tx: VersionedTransaction) -> str:
        self.queue.append(tx)
        return str(tx.signatures[0])

    def simulate(self, tx: VersionedTransaction) -> Failure | None:
        """What executing `tx` on the newest block's state would fail with (None: it would succeed)."""
        if not self._blockhash_is_recent(tx):
            return Failure("BlockhashNotFound", [], 0)
        return simulate(self.svm, tx)

    def airdrop_tx(self, to: Pubkey, lamports: int) -> VersionedTransaction:
        """A faucet transfer, signed with the newest blockhash, as a validator's faucet sends."""
        return system_transfer(self.faucet, to, lamports, Hash.from_string(self.block_at("processed").blockhash))

    def transaction(self, signature: str, max_slot: int) -> tuple[Block, Executed] | None:
        found = self.by_signature.get(signature)
        if found is None or found[0] > max_slot:
            return None
        block = self.blocks[found[0]]
        return block, block.txs[found[1]]

    def signatures_for(self, address: str, max_slot: int) -> list[tuple[Block, Executed]]:
        """Transactions that name `address` up to `max_slot`, newest first."""
        return [
            (self.blocks[slot], self.blocks[slot].txs[pos])
            for slot, pos in reversed(self.by_address.get(address, []))
            if slot <= max_slot
        ]

    def balance(self, address: str, slot: int) -> int:
        """Lamports of `address` once block `slot` was applied."""
        touched = self.by_address.get(address, [])
        before = [(s, p) for s, p in touched if s <= slot]
        if before:
            s, p = before[-1]
            e = self.blocks[s].txs[p]
            return e.post_balances[e.account_keys.index(address)]
        if touched:
            s, p = touched[0]
            e = self.blocks[s].txs[p]
            return e.pre_balances[e.account_keys.index(address)]
        return self.svm.get_balance(Pubkey.from_string(address)) or 0

    # -------------------------------------------------------- internals --
    def _genesis_svm(self) -> LiteSVM:
        # The double checks blockhashes itself: LiteSVM only knows its one latest blockhash.
        svm = LiteSVM().with_blockhash_check(False)
        svm.set_account(self.faucet.pubkey(), Account(FAUCET_LAMPORTS, b"", SYSTEM_PROGRAM))
        return svm

    def _open_bank(self) -> None:
        """Sysvars for the next slot: what the next block executes with, and what preflight simulates on."""
        self._set_clock(self.next_slot, int(time.time()))

    def _set_clock(self, slot: int, unix_timestamp: int) -> None:
        self.svm.set_clock(Clock(slot, self._genesis_time, 0, 0, unix_timestamp))
        parents = [s for s in reversed(self.slots) if s < slot][:MAX_SLOT_HASHES]
        self.svm.set_slot_hashes([(s, Hash.from_string(self.blocks[s].blockhash)) for s in parents])

    def _blockhash_is_recent(self, tx: VersionedTransaction) -> bool:
        recent = {self.blocks[s].blockhash for s in self.slots[-(MAX_PROCESSING_AGE + 1) :]}
        return str(tx.message.recent_blockhash) in recent

    def _append_block(self, txs: list[Executed], block_time: int) -> None:
        slot = self.next_slot
        parent = self.blocks[self.slots[-1]] if self.slots else None
        previous = parent.blockhash if parent else str(Hash.default())
        digest = hashlib.sha256(bytes(Hash.from_string(previous)) + slot.to_bytes(8, "little"))
        for e in txs:
            digest.update(bytes(e.tx.signatures[0]))
        traffic = self.traffic if parent else None
        for signature in traffic.signatures(slot) if traffic else ():
            digest.update(signature)
        self.blocks[slot] = Block(
            slot=slot,
            parent_slot=parent.slot if parent else 0,
            blockhash=str(Hash(digest.digest())),
            previous_blockhash=previous,
            block_time=block_time,
            block_height=len(self.slots),
            txs=txs,
            traffic=traffic,
        )
        self.slots.append(slot)
        self._root = max(self._root, len(self.slots) - 1 - DEPTHS["finalized"])
        for position, e in enumerate(txs):
            self.by_signature[e.signature] = (slot, position)
            for key in e.account_keys:
                self.by_address[key].append((slot, position))
        self.next_slot = slot + 1
        self.on_slot(slot, self.blocks[slot].parent_slot, self.slots[self._root])
