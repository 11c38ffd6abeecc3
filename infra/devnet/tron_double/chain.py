"""The double's chain: blocks produced on demand, a mempool, solidification, reorgs.

Blocks are kept in the visible=false form the node API prints. A block is
solidified once `solidify_after` blocks sit on top of it; solidified blocks
are final, so a reorg may replace only newer ones. Every block remembers the
EVM snapshot taken before its transactions ran, and a reorg reverts to the
first replaced block's snapshot and runs the kept transactions again.
"""

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass

import coincurve

from kernodeck_chains.addresses import tron_address

from . import protobuf, transactions
from .addresses import to_hex
from .evm import Evm
from .execute import execute

BLOCK_VERSION = 32
ZERO_HASH = "00" * 32
_WITNESS_KEY = coincurve.PrivateKey(hashlib.sha256(b"kernodeck tron double witness").digest())
WITNESS = to_hex(tron_address(_WITNESS_KEY.public_key.format(compressed=False)))


class ChainError(ValueError):
    """A request the chain refuses (duplicate transaction, reorg below the solidified block...)."""


@dataclass(frozen=True)
class Block:
    json: dict
    sources: list[dict]  # the transactions as submitted, to run again after a reorg
    infos: list[dict]
    snapshot: str | None  # EVM snapshot taken before the block's transactions ran (None: genesis)
    evm_height: int  # the EVM's height once they had run

    @property
    def number(self) -> int:
        return self.json["block_header"]["raw_data"].get("number", 0)

    @property
    def id(self) -> str:
        return self.json["blockID"]

    @property
    def timestamp_ms(self) -> int:
        return self.json["block_header"]["raw_data"].get("timestamp", 0)


def _tx_trie_root(ids: list[str]) -> str:
    level = [bytes.fromhex(txid) for txid in ids]
    if not level:
        return ZERO_HASH
    while len(level) > 1:
        level = [
            hashlib.sha256(b"".join(level[i : i + 2])).digest() if i + 1 < len(level) else level[i]
            for i in range(0, len(level), 2)
        ]
    return level[0].hex()


class Chain:
    def __init__(
        self, evm: Evm, solidify_after: int, on_block: Callable[[dict, int], None] = lambda block, solid: None
    ):
        self.evm = evm
        self.solidify_after = solidify_after
        self.on_block = on_block  # each new block (node API JSON) and the solidified height, under the lock
        self.lock = threading.RLock()
        self.mempool: list[dict] = []
        self._where: dict[str, tuple[int, int]] = {}  # txid -> (block number, position)
        genesis = {"txTrieRoot": ZERO_HASH, "witness_address": WITNESS, "parentHash": ZERO_HASH}
        genesis_id = protobuf.block_id(0, protobuf.header_raw(genesis))
        self.blocks = [
            Block({"blockID": genesis_id, "block_header": {"raw_data": genesis}}, [], [], None, evm.height())
        ]
        self._last_ms = transactions.now_ms()

    # -- reading ----------------------------------------------------------
    @property
    def tip(self) -> Block:
        return self.blocks[-1]

    @property
    def solid_height(self) -> int:
        return max(0, self.tip.number - self.solidify_after)

    def height(self, solidified: bool) -> int:
        return self.solid_height if solidified else self.tip.number

    def block(self, number: int, bound: int) -> Block | None:
        return self.blocks[number] if 0 <= number <= bound else None

    def block_by_id(self, block_id: str, bound: int) -> Block | None:
        try:
            block = self.block(int(block_id[:16], 16), bound)
        except ValueError:
            return None
        return block if block is not None and block.id == block_id else None

    def locate(self, txid: str, bound: int) -> tuple[Block, int] | None:
        where = self._where.get(txid)
        if where is None or where[0] > bound:
            return None
        return self.blocks[where[0]], where[1]

    def known(self, txid: str) -> bool:
        return txid in self._where or any(tx["txID"] == txid for tx in self.mempool)

    # -- writing ----------------------------------------------------------
    def submit(self, tx: dict) -> None:
        with self.lock:
            if self.known(tx["txID"]):
                raise ChainError("Dup transaction.")
            self.mempool.append(tx)

    def mine(self, count: int = 1) -> list[str]:
        with self.lock:
            ids = []
            for _ in range(count):
                pending, self.mempool = self.mempool, []
                ids.append(self._produce(pending).id)
            return ids

    def reorg(self, depth: int, drop: set[str]) -> tuple[list[str], list[str]]:
        """Replace the last `depth` blocks with as many new ones holding the same transactions but `drop`."""
        with self.lock:
            if not 1 <= depth <= self.tip.number - self.solid_height:
                raise ChainError(
                    f"depth {depth}: only the {self.tip.number - self.solid_height} unsolidified blocks can change"
                )
            replaced = self.blocks[-depth:]
            unknown = drop - {tx["txID"] for block in replaced for tx in block.sources}
            if unknown:
                raise ChainError(f"not in the replaced blocks: {sorted(unknown)}")
            del self.blocks[-depth:]
            for block in replaced:
                for tx in block.sources:
                    del self._where[tx["txID"]]
            self.evm.revert(replaced[0].snapshot)
            new = [self._produce([tx for tx in block.sources if tx["txID"] not in drop]) for block in replaced]
            return [block.id for block in replaced], [block.id for block in new]

    def _produce(self, pending: list[dict]) -> Block:
        parent = self.tip
        number = parent.number + 1
        snapshot = self.evm.snapshot()
        ran = [(tx, outcome) for tx in pending if (outcome := execute(self.evm, tx)) is not None]
        # Strictly increasing, so a block that replaces another never gets its id.
        timestamp = self._last_ms = max(transactions.now_ms(), self._last_ms + 1)
        raw_data = {
            "number": number,
            "txTrieRoot": _tx_trie_root([tx["txID"] for tx, _ in ran]),
            "witness_address": WITNESS,
            "parentHash": parent.id,
            "version": BLOCK_VERSION,
            "timestamp": timestamp,
        }
        header = protobuf.header_raw(raw_data)
        signature = _WITNESS_KEY.sign_recoverable(hashlib.sha256(header).digest(), hasher=None).hex()
        json = {
            "blockID": protobuf.block_id(number, header),
            "block_header": {"raw_data": raw_data, "witness_signature": signature},
        }
        if ran:
            json["transactions"] = [_with_result(tx, outcome.contract_ret, outcome.created) for tx, outcome in ran]
        infos = [
            {"id": tx["txID"], "blockNumber": number, "blockTimeStamp": timestamp, **outcome.info}
            for tx, outcome in ran
        ]
        block = Block(json, [tx for tx, _ in ran], infos, snapshot, self.evm.height())
        self.blocks.append(block)
        for position, (tx, _) in enumerate(ran):
            self._where[tx["txID"]] = (number, position)
        self.on_block(json, self.solid_height)
        return block


def _with_result(tx: dict, contract_ret: str, created: str | None) -> dict:
    out = {"ret": [{"contractRet": contract_ret}], **tx}
    if created:
        out["contract_address"] = created  # printed beside a CreateSmartContract, as java-tron does
    return out
