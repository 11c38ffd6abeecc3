"""Ethereum through its standard JSON-RPC over HTTP (geth, erigon, nethermind, anvil, providers).

Each block is read by number with its transactions (`block`), then by hash
in one batch request: its ERC-20 Transfer logs and, where the node has the
debug API, its call traces. What is reported, with the index that (txid, index) makes
unique:

- ETH sent by a transaction to a watched address: index 0, once its receipt
  says the transaction succeeded (receipts are asked for matches only);
- Transfer(from, to, value) logs to a watched address from ANY contract
  (payments tells the tokens it accepts from unknown ones): index = the log's
  logIndex, token = the log's contract;
- ETH sent to a watched address by a contract (an internal transfer: a CALL,
  CREATE or SELFDESTRUCT frame with value, from `debug_traceBlockByHash` with
  the callTracer), outside any reverted frame: index = -n, n being the frame's
  position in a depth-first pre-order walk of the transaction's call tree
  (the transaction itself is 0). A block's call tree never changes, so n is
  stable; negative, so it never collides with a log index of the same
  transaction. Where the node lacks the debug API, `trace_block`'s flat
  traces give the same frames in the same order. A node with neither gives
  no internal transfers: each such block is counted in BLOCKS_WITHOUT_TRACES,
  `unseen` says `internal_eth`, and the watcher's balance check is the
  backstop. A block whose traces fail stops the pass there, and the next
  pass asks only for what failed (the block kept, its hash checked): the
  trace call again, or `debug_traceTransaction` for each transaction that
  `debug_traceBlockByHash` answered with an error.

An empty `eth_getLogs` answer is believed only when the block's logs bloom
cannot hold the Transfer topic; otherwise the block's receipts are read (a
load-balanced provider's backend answers `[]` for a hash it does not know).

Addresses are lowercase 0x hex; amounts are exact ints (wei, token units).
Ethereum has no mempool the watcher relies on: `pending_transfers` is [].
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import Counter

from kernodeck_chains import evm
from kernodeck_chains.hashes import keccak256
from kernodeck_watchers.chains.base import BlockNotYet, BlockRef, NodeError, SeenTransfer, Watched
from kernodeck_watchers.chains.jsonrpc import JsonRpc, RpcError, ok

log = logging.getLogger(__name__)

# The ERC-20 (and ERC-721) Transfer event's topic0, as Ethereum's JSON-RPC spells it.
TRANSFER_TOPIC = "0x" + evm.TRANSFER_TOPIC
METHOD_NOT_FOUND = -32601
BALANCE_OF = "0x" + evm.selector("balanceOf(address)").hex()
VALUE_FRAMES = frozenset({"CALL", "CREATE", "CREATE2", "SELFDESTRUCT"})  # frames whose value moves to `to`
BATCH_BLOCKS = 8  # full blocks per batch in address_activity: geth caps a batch answer at 25 MB

BLOCKS_WITHOUT_TRACES = Counter(
    "kernodeck_watcher_blocks_without_traces_total",
    "Blocks scanned without call traces (the node lacks or failed debug_traceBlockByHash): internal ETH transfers unseen",
    ["network"],
)


def bloom_may_hold(bloom: str | None, topic: str) -> bool:
    """Whether a block's 2048-bit logs bloom may hold `topic` (0x hex): False only when it surely does not. No
    bloom (a node that leaves it out): it may."""
    if not bloom:
        return True
    bits = int(bloom, 16)
    digest = keccak256(bytes.fromhex(topic[2:]))
    return all(bits >> (((digest[i] << 8) | digest[i + 1]) & 2047) & 1 for i in (0, 2, 4))


def block_ranges(low: int, high: int, most: int) -> list[tuple[int, int]]:
    """[low, high] as ranges of at most `most` blocks, in order."""
    return [(start, min(start + most - 1, high)) for start in range(low, high + 1, most)]


def block_ref(block: dict, payload: dict | None = None) -> BlockRef:
    return BlockRef(int(block["number"], 16), block["hash"], block["parentHash"], int(block["timestamp"], 16), payload)


@dataclass(frozen=True)
class BlockContents:
    """One block as the node sent it: full transactions, Transfer logs, and call traces (None: unavailable)."""

    transactions: list[dict]
    logs: list[dict]
    traces: list[dict] | None
    flat_traces: list[dict] | None = None  # trace_block's, where the node has no debug_traceBlockByHash


def native_transfers(transactions: Iterable[dict], watched: Watched) -> list[SeenTransfer]:
    """ETH sent by transactions to watched addresses, whether or not they succeeded."""
    found = []
    for tx in transactions:
        to = tx.get("to")  # None: contract creation
        if to and (address := to.lower()) in watched and (value := int(tx.get("value") or "0x0", 16)):
            found.append(SeenTransfer(tx["hash"], 0, address, None, value))
    return found


def token_transfers(logs: Iterable[dict], watched: Watched) -> list[SeenTransfer]:
    """ERC-20 Transfer logs to watched addresses; other logs with the same topic0 (ERC-721's four topics,
    non-standard events with fewer, data that is not one uint256, a `to` that is not an address) are not."""
    found = []
    for entry in logs:
        topics = entry.get("topics") or ()
        if len(topics) != 3 or topics[0] != TRANSFER_TOPIC or entry.get("removed"):
            continue
        to = topics[2]
        if len(to) != 66 or to[2:26] != "0" * 24 or (address := "0x" + to[26:].lower()) not in watched:
            continue
        data = entry.get("data") or ""
        if len(data) == 66 and (amount := int(data, 16)):
            found.append(
                SeenTransfer(
                    entry["transactionHash"], int(entry["logIndex"], 16), address, entry["address"].lower(), amount
                )
            )
    return found


def internal_transfers(txid: str, root: dict, watched: Watched) -> list[SeenTransfer]:
    """ETH sent to watched addresses by the frames under `root` (a callTracer tree) that were not reverted."""
    found = []
    stack = [(root, False)]
    position = -1
    while stack:  # not recursive: a call tree may be 1024 frames deep
        frame, reverted = stack.pop()
        position += 1
        reverted = reverted or bool(frame.get("error"))  # a reverted frame undoes everything under it
        to = frame.get("to")
        if position and not reverted and to and frame.get("type") in VALUE_FRAMES:
            address = to.lower()
            if address in watched and (value := int(frame.get("value") or "0x0", 16)):
                found.append(SeenTransfer(txid, -position, address, None, value))
        stack.extend((child, reverted) for child in reversed(frame.get("calls") or ()))
    return found


def parity_internal_transfers(traces: Iterable[dict], watched: Watched) -> list[SeenTransfer]:
    """The same from `trace_block`'s flat traces (Erigon, Nethermind, Reth, anvil): each transaction's frames in
    the same depth-first pre-order (its position in the list is the callTracer walk's), `traceAddress` the path."""
    found = []
    position, txid, reverted_under = 0, None, []
    for frame in traces:
        if frame.get("transactionHash") != txid:
            position, txid, reverted_under = 0, frame.get("transactionHash"), []
        else:
            position += 1
        path = tuple(frame.get("traceAddress") or ())
        if frame.get("error"):
            reverted_under.append(path)
        if not position or txid is None or any(path[: len(p)] == p for p in reverted_under):
            continue
        action, kind = frame.get("action") or {}, frame.get("type")
        if kind == "call" and action.get("callType") == "call":
            to, value = action.get("to"), action.get("value")
        elif kind == "create":
            to, value = (frame.get("result") or {}).get("address"), action.get("value")
        elif kind == "suicide":
            to, value = action.get("refundAddress"), action.get("balance")
        else:
            continue
        if to and (address := to.lower()) in watched and (amount := int(value or "0x0", 16)):
            found.append(SeenTransfer(txid, -position, address, None, amount))
    return found


def match_block(contents: BlockContents, watched: Watched) -> list[SeenTransfer]:
    """Every transfer in a block to a watched address, before failed transactions are dropped."""
    found = native_transfers(contents.transactions, watched) + token_transfers(contents.logs, watched)
    found += parity_internal_transfers(contents.flat_traces or (), watched)
    for position, trace in enumerate(contents.traces or ()):
        # geth before 1.13 gives no txHash: traces come in the block's transaction order
        txid = trace.get("txHash") or contents.transactions[position]["hash"]
        found += internal_transfers(txid, trace["result"], watched)
    return found


@dataclass
class Untraced:
    """A block read whose call traces failed: its body and Transfer logs are kept, and the traces it got so far
    (by transaction hash), so that a retry asks for the missing traces alone."""

    ref: BlockRef  # with the full block as payload
    logs: list[dict]
    traced: dict[str, dict] = field(default_factory=dict)  # txid -> {"txHash", "result"} (callTracer)
    failed_since: float = field(default_factory=time.monotonic)

    @property
    def txids(self) -> list[str]:
        return [tx["hash"] for tx in self.ref.payload["transactions"]]

    def missing(self) -> list[str]:
        return [txid for txid in self.txids if txid not in self.traced]


class EthereumClient:
    def __init__(
        self,
        rpc_url: str,
        network: str = "ethereum",
        timeout_s: float = 30.0,
        logs_max_blocks: int = 1000,
        trace_retry_s: float = 120.0,
    ):
        self.network = network
        self.rpc = JsonRpc(rpc_url, timeout_s)
        self.logs_max_blocks = logs_max_blocks  # providers refuse eth_getLogs over more blocks (often 1,000 or less)
        self.trace_retry_s = trace_retry_s  # how long a block whose traces failed is tried again
        # debug_traceBlockByHash; trace_block where the node lacks it; None where it lacks both
        self.tracer: str | None = "debug"
        # The block the scan stopped at because its traces failed (the scan goes in order: one at a time).
        self._untraced: Untraced | None = None

    @property
    def unseen(self) -> frozenset[str]:
        return frozenset() if self.tracer else frozenset({"internal_eth"})

    def normalize(self, address: str) -> str:
        return address.strip().lower()

    def tip(self) -> BlockRef:
        return block_ref(self.rpc.call("eth_getBlockByNumber", "latest", False))

    def block(self, height: int) -> BlockRef:
        """The block with its transactions (the payload `fetch_block` reuses). The block whose traces failed is
        not downloaded again while the node's block at its height is still the same."""
        untraced = self._untraced
        if untraced is not None and untraced.ref.height == height:
            if self.block_hash(height) == untraced.ref.hash:
                return untraced.ref
            self._untraced = None  # replaced by a reorganisation
        block = self._by_number(height, full=True)
        return block_ref(block, payload=block)

    def block_hash(self, height: int) -> str:
        return self._by_number(height, full=False)["hash"]

    def _by_number(self, height: int, full: bool) -> dict:
        block = self.rpc.call("eth_getBlockByNumber", hex(height), full)
        if block is None:  # a provider's backend that has not got it yet (`null` at the tip)
            raise BlockNotYet(f"no block at height {height}")
        return block

    def fetch_block(self, block: BlockRef) -> BlockContents:
        """The block's transactions (its payload, else read by hash), Transfer logs and traces, by hash: all of
        that one block even if a reorg replaces it meanwhile (then NodeError, once the node has forgotten it).
        For the block whose traces failed, only the missing traces are asked again."""
        untraced = self._untraced
        if untraced is not None and untraced.ref.hash == block.hash and self.tracer is not None:
            return self._with_traces(untraced, self._trace_again(untraced))
        calls = [("eth_getLogs", [{"blockHash": block.hash, "topics": [TRANSFER_TOPIC]}])]
        if self.tracer is not None:
            calls.append(self._trace_call(block))
        if block.payload is None:
            calls.append(("eth_getBlockByHash", [block.hash, True]))
        answers = self.rpc.batch(calls)
        body = block.payload if block.payload is not None else ok(answers.pop())
        logs = ok(answers[0])
        if body is None:
            raise NodeError(f"block {block.hash} (height {block.height}) is no longer known to the node")
        if not logs and bloom_may_hold(body.get("logsBloom"), TRANSFER_TOPIC):
            logs = self._transfer_logs_from_receipts(block)
        read = Untraced(BlockRef(block.height, block.hash, block.parent_hash, block.time, body), logs)
        if self.tracer is None:
            return self._without_traces(read)
        return self._with_traces(read, answers[1])

    def _trace_call(self, block: BlockRef) -> tuple[str, list]:
        if self.tracer == "debug":
            return "debug_traceBlockByHash", [block.hash, {"tracer": "callTracer"}]
        return "trace_block", [hex(block.height)]  # by number: its traces name their block, checked

    def _trace_again(self, untraced: Untraced) -> Any:
        """The block's trace call again; where some of its transactions were traced, each missing one alone
        (`debug_traceTransaction`), answered in the shape of debug_traceBlockByHash's answer."""
        if self.tracer != "debug" or not untraced.traced:
            return self.rpc.batch([self._trace_call(untraced.ref)])[0]
        missing = untraced.missing()
        calls = [("debug_traceTransaction", [txid, {"tracer": "callTracer"}]) for txid in missing]
        answers = self.rpc.batch(calls)
        return [
            {"txHash": txid, "error": str(answer)}
            if isinstance(answer, RpcError)
            else {"txHash": txid, "result": answer}
            for txid, answer in zip(missing, answers, strict=True)
        ]

    def _transfer_logs_from_receipts(self, block: BlockRef) -> list[dict]:
        """The Transfer logs of the block's receipts: `eth_getLogs` said none while the block's logs bloom says
        there may be some (a backend that answers [] for a hash it does not know yet). The receipts settle it;
        without them the block is read again later."""
        receipts = self.rpc.call("eth_getBlockReceipts", block.hash)
        if receipts is None:
            raise NodeError(f"block {block.hash}: no logs though its bloom holds Transfer, and no receipts")
        return [entry for receipt in receipts for entry in receipt.get("logs") or () if entry.get("topics")]

    def _with_traces(self, read: Untraced, answer: Any) -> BlockContents:
        """The block's contents with its call traces (callTracer's, or trace_block's flat ones). A node that
        lacks debug_traceBlockByHash is asked trace_block from then on, one that lacks both is not asked again
        (`internal_eth` unseen). Any other failure (pruned state, a tracer timeout, one transaction's trace)
        stops the pass at this block for up to `trace_retry_s`, keeping what was read, then the block goes with
        the traces it got (counted; the balance check is the backstop)."""
        block = read.ref
        transactions = block.payload["transactions"]
        if self.tracer == "debug" and isinstance(answer, list):
            for position, trace in enumerate(answer):
                if not isinstance(trace, dict) or "result" not in trace:
                    continue  # this transaction's trace failed (geth's {"txHash", "error"})
                # geth before 1.13 gives no txHash: a whole block's traces come in its transaction order
                txid = trace.get("txHash") or (transactions[position]["hash"] if position < len(transactions) else None)
                if txid is not None:
                    read.traced[txid] = {"txHash": txid, "result": trace["result"]}
            if not read.missing():
                self._untraced = None
                return BlockContents(transactions, read.logs, [read.traced[txid] for txid in read.txids])
        if (
            self.tracer == "trace_block"
            and isinstance(answer, list)
            and all(isinstance(t, dict) and t.get("blockHash") == block.hash for t in answer)
        ):
            self._untraced = None
            return BlockContents(transactions, read.logs, None, answer)
        if isinstance(answer, RpcError) and answer.code == METHOD_NOT_FOUND:
            lacked, self.tracer = self.tracer, "trace_block" if self.tracer == "debug" else None
            log.warning("the node lacks a tracing method", extra={"network": self.network, "method": lacked})
            if self.tracer is None:
                return self._without_traces(read)
            return self._with_traces(read, self.rpc.batch([self._trace_call(block)])[0])
        self._untraced = read
        if time.monotonic() - read.failed_since < self.trace_retry_s:
            raise NodeError(f"traces of block {block.height} failed, tried again later: {str(answer)[:200]}")
        log.warning(
            "call traces missing: internal ETH transfers in those transactions are not seen",
            extra={
                "network": self.network,
                "height": block.height,
                "untraced": len(read.missing()),
                "error": str(answer)[:300],
            },
        )
        traces = [read.traced[txid] for txid in read.txids if txid in read.traced]
        return self._without_traces(read, traces)

    def _without_traces(self, read: Untraced, traces: list[dict] | None = None) -> BlockContents:
        self._untraced = None
        BLOCKS_WITHOUT_TRACES.labels(self.network).inc()
        return BlockContents(read.ref.payload["transactions"], read.logs, traces)

    def transfers_in_block(self, block: BlockRef, watched: Watched) -> list[SeenTransfer]:
        return self._succeeded(match_block(self.fetch_block(block), watched))

    def _succeeded(self, transfers: list[SeenTransfer]) -> list[SeenTransfer]:
        """Drops the ETH transfers of transactions that failed (logs and traces already tell)."""
        txids = sorted({t.txid for t in transfers if t.token is None and t.index == 0})
        if not txids:
            return transfers
        receipts = self.rpc.batch([("eth_getTransactionReceipt", [txid]) for txid in txids])
        failed = set()
        for txid, receipt in zip(txids, map(ok, receipts), strict=True):
            if receipt is None:
                raise NodeError(f"no receipt for {txid}: reorged meanwhile?")
            if receipt.get("status") == "0x0":  # blocks before Byzantium have no status: they count
                failed.add(txid)
        return [t for t in transfers if t.txid not in failed]

    def pending_transfers(self, watched: Watched) -> list[SeenTransfer]:
        return []

    def balances(self, addresses: list[str], height: int) -> dict[str, int]:
        answers = self.rpc.batch([("eth_getBalance", [address, hex(height)]) for address in addresses])
        return {address: int(ok(answer), 16) for address, answer in zip(addresses, answers, strict=True)}

    def token_balances(self, holdings: list[tuple[str, str]], height: int) -> dict[tuple[str, str], int]:
        """ERC-20 `balanceOf` of each (address, token) at `height` (`eth_call`, batched); a call that reverts, or
        answers no uint256 (no code there), is left out."""
        calls = [
            ("eth_call", [{"to": token, "data": BALANCE_OF + address[2:].rjust(64, "0")}, hex(height)])
            for address, token in holdings
        ]
        balances = {}
        for held, answer in zip(holdings, self.rpc.batch(calls), strict=True):
            if isinstance(answer, str) and len(answer) >= 66:
                balances[held] = int(answer[2:66], 16)
        return balances

    def address_activity(
        self, addresses: Collection[str], since_height: int
    ) -> list[tuple[SeenTransfer, BlockRef | None]]:
        """Token transfers to `addresses` (one eth_getLogs) and the ETH that transactions sent them, in the
        blocks since `since_height`, each with the block it is in (a log's `blockHash`). Internal transfers would
        need every block traced: a balance larger than the ETH found is logged for an operator instead."""
        wanted = {self.normalize(address) for address in addresses}
        watched = sorted(wanted)
        tip = self.tip().height
        to_topics = ["0x" + address[2:].rjust(64, "0") for address in watched]
        log_calls = [
            (
                "eth_getLogs",
                [{"fromBlock": hex(low), "toBlock": hex(high), "topics": [TRANSFER_TOPIC, None, to_topics]}],
            )
            for low, high in block_ranges(since_height, tip, self.logs_max_blocks)
        ]
        balance_calls = [("eth_getBalance", [address, hex(tip)]) for address in watched]
        answers = list(map(ok, self.rpc.batch([*log_calls, *balance_calls])))
        logs = [entry for answer in answers[: len(log_calls)] for entry in answer]
        balances = answers[len(log_calls) :]
        blocks: dict[str, BlockRef] = {}
        native = []
        for first in range(since_height, tip + 1, BATCH_BLOCKS):
            calls = [("eth_getBlockByNumber", [hex(h), True]) for h in range(first, min(first + BATCH_BLOCKS, tip + 1))]
            for block in filter(None, map(ok, self.rpc.batch(calls))):  # None: a reorg shortened the chain
                ref = blocks[block["hash"]] = block_ref(block)
                native += [(t, ref) for t in native_transfers(block["transactions"], wanted)]
        blocks |= self._headers({e["blockHash"] for e in logs} - blocks.keys())
        found = [
            (t, blocks[e["blockHash"]]) for e in logs if e["blockHash"] in blocks for t in token_transfers([e], wanted)
        ]
        succeeded = set(self._succeeded([t for t, _ in native]))
        found += [(t, ref) for t, ref in native if t in succeeded]
        for address, balance in zip(watched, balances, strict=True):
            if int(balance, 16) > sum(t.amount for t, _ in found if t.token is None and t.address == address):
                log.warning(
                    "balance without a matching ETH transfer (internal, or older than the window)",
                    extra={
                        "network": self.network,
                        "address": address,
                        "balance": int(balance, 16),
                        "since": since_height,
                    },
                )
        return found

    def _headers(self, hashes: Collection[str]) -> dict[str, BlockRef]:
        """The refs of blocks a reorg replaced since their logs were read; those the node forgot are left out."""
        if not hashes:
            return {}
        answers = self.rpc.batch([("eth_getBlockByHash", [block_hash, False]) for block_hash in hashes])
        return {block["hash"]: block_ref(block) for block in filter(None, map(ok, answers))}
