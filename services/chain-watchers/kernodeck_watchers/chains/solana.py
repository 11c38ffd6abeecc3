"""Solana through its standard JSON-RPC API, at one commitment level (`confirmed` or `finalized`).

Heights are slots. A slot can be skipped: its leader produced no block, or
the block was on an abandoned fork. The watcher core scans every height in
order, so a skipped slot still gets a BlockRef: one with no transfers whose
`hash` and `parent_hash` are both the hash of the newest block before it
(and whose `time` is the next block's).
Parent-hash checks then hold across gaps (a block's `previousBlockhash` is
the hash of the newest block before it, whatever its slot), and a block that
becomes a skipped slot after a fork changes the hash at its height, which is
how the core sees the reorg. A produced block never has hash == parent_hash.

Transfers are read from balance changes, so SOL sent by a program (CPI) is
seen as well as System transfers: in each successful transaction, a watched
account whose lamports grew received the difference; an SPL token account
owned by a watched address whose amount grew received that many base units of
its mint. `index` is the account's position in the transaction's account
keys (the token account's for tokens). Solana has no mempool to show.

A mainnet block is thousands of transactions, most of them votes, and comes
every 400 ms: the scan asks only for what matching needs
(`transactionDetails: "accounts"`: each transaction's accounts and balances,
not its instructions and logs), compressed (gzip, where the node's front end
offers it), and reads up to `fetch_ahead` slots at once while it matches and
commits them one by one in slot order (ahead.py), never past the slot where
the pass stops (`tip_delay` below the tip), and nothing read in one pass is
used by the next.
"""

from __future__ import annotations

from collections.abc import Collection
from itertools import compress, count
from operator import gt, methodcaller

from .ahead import Ahead
from .base import BlockNotYet, BlockRef, NodeError, SeenTransfer, Watched
from .jsonrpc import JsonRpc, RpcError, ok

# agave's errors for a slot without a block (rpc-client-api custom_error.rs)
BLOCK_NOT_AVAILABLE = -32004  # also: a skipped slot newer than the finalized root
SLOT_SKIPPED = -32007
LONG_TERM_STORAGE_SLOT_SKIPPED = -32009
NO_BLOCK = {BLOCK_NOT_AVAILABLE, SLOT_SKIPPED, LONG_TERM_STORAGE_SLOT_SKIPPED}
_owner = methodcaller("get", "owner")


class SolanaClient:
    unseen: frozenset[str] = frozenset()  # balance changes show SOL sent by programs too
    signatures_page = 1000  # the most getSignaturesForAddress returns at once

    def __init__(
        self,
        rpc_url: str,
        network: str = "solana",
        commitment: str = "finalized",
        timeout_s: float = 10.0,
        fetch_ahead: int = 1,
        tip_delay: int = 0,
    ):
        if commitment not in ("confirmed", "finalized"):
            raise ValueError("getBlock serves `confirmed` or `finalized` blocks only")
        self.rpc = JsonRpc(rpc_url, timeout_s, gzip=True)
        self.network = network
        self.commitment = commitment
        self._ahead = Ahead(self._read_block, fetch_ahead)
        self.tip_delay = tip_delay  # the scan's: it stops that many slots below the tip
        self._target = -1  # where this pass's scan stops: no read ahead goes past it

    def normalize(self, address: str) -> str:
        return address  # base58 public keys have one spelling

    def tip(self) -> BlockRef:
        slot = self.rpc.call("getSlot", {"commitment": self.commitment})
        block = self._get_block(slot, "none")
        if block is None:
            raise BlockNotYet(f"getSlot answered {slot}, but its block is not available")
        # A new pass: what was read ahead served the last one only, and this one reads no further than it scans.
        self._ahead.forget()
        self._target = slot - self.tip_delay
        return _ref(slot, block)

    def block(self, height: int) -> BlockRef:
        """The slot's block, the next `fetch_ahead - 1` slots (up to the scan's target) read meanwhile."""
        return self._ahead.get(height, self._target)

    def _read_block(self, height: int) -> BlockRef:
        block = self._get_block(height, "accounts")
        if block is None:
            return self._skipped(height)
        return _ref(height, block, payload=block)

    def block_hash(self, height: int) -> str:
        block = self._get_block(height, "none")
        return self._skipped(height).hash if block is None else block["blockhash"]

    def transfers_in_block(self, block: BlockRef, watched: Watched) -> list[SeenTransfer]:
        """Every SPL mint comes back, the mint as `token`."""
        if block.hash == block.parent_hash:
            return []  # a skipped slot
        raw = block.payload or self._get_block(block.height, "accounts")
        if raw is None or raw["blockhash"] != block.hash:
            raise NodeError(f"slot {block.height} no longer holds block {block.hash}")
        return [t for item in raw["transactions"] for t in _transfers(item, watched)]

    def pending_transfers(self, watched: Watched) -> list[SeenTransfer]:
        return []

    def balances(self, addresses: list[str], height: int) -> dict[str, int]:
        """At the commitment's newest slot (`getBalance`, batched)."""
        config = {"commitment": self.commitment}
        answers = self.rpc.batch([("getBalance", [address, config]) for address in addresses])
        return {address: int(ok(answer)["value"]) for address, answer in zip(addresses, answers, strict=True)}

    def address_activity(
        self, addresses: Collection[str], since_height: int
    ) -> list[tuple[SeenTransfer, BlockRef | None]]:
        """From each address's signature index: one getTransaction per transaction, however many it paid, and
        one getBlock (without its transactions) per slot found."""
        signatures = dict.fromkeys(  # newest first, each once
            entry["signature"]
            for address in addresses
            for entry in self._signatures_since(address, since_height)
            if entry["err"] is None
        )
        config = {"encoding": "json", "commitment": self.commitment, "maxSupportedTransactionVersion": 0}
        found: list[tuple[SeenTransfer, BlockRef | None]] = []
        refs: dict[int, BlockRef | None] = {}
        for signature in signatures:
            item = self.rpc.call("getTransaction", signature, config)
            if item is None:
                continue
            slot = item["slot"]
            if slot not in refs:
                # getTransaction names the slot, not the block: the hash is that of the slot's block now, so a
                # fork between the two reads goes unseen (only the slot is checked; `finalized` has no forks).
                block = self._get_block(slot, "none")
                refs[slot] = None if block is None else _ref(slot, block)
            if refs[slot] is not None:  # None: the slot lost its block meanwhile
                found += [(t, refs[slot]) for t in _transfers(item, addresses)]
        return found

    def _signatures_since(self, address: str, since_height: int) -> list[dict]:
        """The address's transactions at or after slot `since_height`, newest first, page by page."""
        entries: list[dict] = []
        config = {"commitment": self.commitment, "limit": self.signatures_page}
        while True:
            page = self.rpc.call("getSignaturesForAddress", address, config)
            entries += [e for e in page if e["slot"] >= since_height]
            if len(page) < self.signatures_page or page[-1]["slot"] < since_height:
                return entries
            config = {**config, "before": page[-1]["signature"]}

    def _skipped(self, height: int) -> BlockRef:
        """A skipped slot's ref, from the next block's parent (the newest block before the slot)."""
        following = self.rpc.call("getBlocksWithLimit", height, 1, {"commitment": self.commitment})
        if not following or following[0] == height:
            raise BlockNotYet(f"the block at slot {height} is not available yet")
        block = self._get_block(following[0], "none")
        if block is None or block["parentSlot"] >= height:
            raise NodeError(f"slot {height}: the node's answers changed while reading them")
        return BlockRef(height, block["previousBlockhash"], block["previousBlockhash"], block["blockTime"] or 0)

    def _get_block(self, slot: int, details: str) -> dict | None:
        """The block at `slot`, or None where the node has no block there."""
        config = {
            "encoding": "json",
            "transactionDetails": details,
            "rewards": False,
            "commitment": self.commitment,
            "maxSupportedTransactionVersion": 0,
        }
        try:
            return self.rpc.call("getBlock", slot, config)
        except RpcError as e:
            if e.code in NO_BLOCK:
                return None
            raise


def _ref(slot: int, block: dict, payload: dict | None = None) -> BlockRef:
    return BlockRef(slot, block["blockhash"], block["previousBlockhash"], block["blockTime"] or 0, payload)


def _transfers(item: dict, watched: Watched) -> list[SeenTransfer]:
    """What watched addresses received in one transaction (a getBlock entry or a getTransaction result). Most
    transactions (votes) raise no balance and hold no token account: they are passed over in C (`map`), and
    only a raised balance's account, and a token balance's owner, are looked up."""
    meta = item["meta"]
    if meta is None or meta["err"] is not None:
        return []
    pre, post = meta["preBalances"], meta["postBalances"]
    if len(pre) != len(post):
        raise ValueError(f"{len(pre)} balances before, {len(post)} after")
    raised = any(map(gt, post, pre))
    tokens = meta.get("postTokenBalances") or ()
    if not raised and (not tokens or not any(map(watched.__contains__, map(_owner, tokens)))):
        return []
    transaction = item["transaction"]
    if "message" in transaction:  # full details (getTransaction): the message's keys, then the loaded ones
        loaded = meta.get("loadedAddresses") or {}
        keys = transaction["message"]["accountKeys"] + loaded.get("writable", []) + loaded.get("readonly", [])
    else:  # `transactionDetails: "accounts"`: every key, loaded ones included, in the same order
        keys = [account["pubkey"] for account in transaction["accountKeys"]]
    if len(keys) != len(pre):
        raise ValueError(f"{len(keys)} accounts, {len(pre)} balances")
    txid = transaction["signatures"][0]
    found = [
        SeenTransfer(txid, index, keys[index], None, post[index] - pre[index])
        for index in compress(count(), map(gt, post, pre))
        if keys[index] in watched
    ]
    for after in tokens:
        if (owner := after.get("owner")) in watched:
            index = after["accountIndex"]
            before = next((b for b in meta.get("preTokenBalances") or () if b["accountIndex"] == index), None)
            received = int(after["uiTokenAmount"]["amount"]) - (int(before["uiTokenAmount"]["amount"]) if before else 0)
            if received > 0:
                found.append(SeenTransfer(txid, index, owner, after["mint"], received))
    return found
