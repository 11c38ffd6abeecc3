"""Bitcoin Core and Litecoin Core (and forks such as Bitcoin Knots) over their JSON-RPC.

Blocks are read decoded (`getblock <hash> 2`): each output names its
address in `scriptPubKey.address` (Litecoin Core 0.21, like Bitcoin Core
before 22, in a one-element `addresses` list). The node's coin amounts are
decimal numbers, turned into satoshis (litoshis) exactly.

The mempool is listed with `getrawmempool`; only transactions not seen
before are fetched (`getrawtransaction <txid> true`, batched), and their
outputs are kept until they leave it.

"J'ai payé" looks at the mempool and the last blocks, not `scantxoutset`:
that walks the whole UTXO set (minutes on mainnet, one scan at a time per
node) and misses outputs already spent, while a payment the scanner missed
is recent by nature.
"""

import logging
from collections.abc import Collection, Container, Iterable, Iterator
from decimal import Decimal

from kernodeck_watchers import metrics
from kernodeck_watchers.chains.base import BlockNotYet, BlockRef, NodeError, SeenTransfer
from kernodeck_watchers.chains.jsonrpc import JsonRpc, RpcError

DECIMALS = 8
BECH32_PREFIXES = {
    "bitcoin": ("bc1", "tb1", "bcrt1"),
    "litecoin": ("ltc1", "tltc1", "rltc1"),
}
BATCH = 500
OUT_OF_RANGE = -8  # getblockhash above the node's tip

log = logging.getLogger(__name__)

Output = tuple[int, str, int]  # output index, address, base units
UNREADABLE = (KeyError, TypeError, ValueError, ArithmeticError, AttributeError)


def to_base_units(value: Decimal | int) -> int:
    """An amount in whole coins as base units; refuse one finer than a base unit rather than round it."""
    units = Decimal(value).scaleb(DECIMALS)
    if units != units.to_integral_value():
        raise ValueError(f"{value} has more than {DECIMALS} decimals")
    return int(units)


def paid_address(script: dict) -> str | None:
    """The one address an output script pays; None for a script without one (OP_RETURN, bare multisig)."""
    address = script.get("address")
    if address is None:
        several = script.get("addresses")
        address = several[0] if several and len(several) == 1 else None
    return address


def outputs(tx: dict) -> Iterator[Output]:
    """The outputs of a decoded transaction that pay an address. Litecoin's MWEB outputs (`ismweb`, an
    `output_id` and nothing else: the amount and the receiver are hidden) pay no address the watcher can
    know; a peg-out shows under its kernel until mined, then as an output of the block's HogEx transaction,
    read like any other."""
    for out in tx["vout"]:
        if out.get("ismweb"):
            continue
        if (address := paid_address(out["scriptPubKey"])) is not None:
            yield out["n"], address, to_base_units(out["value"])


def readable_outputs(tx: dict, network: str) -> tuple[Output, ...]:
    """`outputs(tx)`; none, logged and counted, for a transaction of a shape this client cannot read: one
    transaction never stops a pass (the balance check is the backstop for what it may have paid)."""
    try:
        return tuple(outputs(tx))
    except UNREADABLE as error:
        _unreadable(tx, network, error)
        return ()


def match(txs: Iterable[dict], watched: Container[str], network: str) -> list[SeenTransfer]:
    """The outputs of decoded transactions paying a watched address. Until an output pays a watched address
    only its address is read (two dict lookups and one set lookup): its amount, its index and the rest are
    read for a match only. A transaction of a shape this client cannot read where it matched pays nothing,
    as in `readable_outputs`."""
    found: list[SeenTransfer] = []
    for tx in txs:
        matched = len(found)
        try:
            for out in tx["vout"]:
                script = out.get("scriptPubKey")  # none on Litecoin's MWEB outputs
                if script is None:
                    continue
                address = script.get("address") or paid_address(script)
                if address in watched and not out.get("ismweb"):
                    found.append(SeenTransfer(tx["txid"], out["n"], address, None, to_base_units(out["value"])))
        except UNREADABLE as error:
            del found[matched:]
            _unreadable(tx, network, error)
    return found


def _unreadable(tx: dict, network: str, error: Exception) -> None:
    metrics.UNREADABLE_TRANSACTIONS.labels(network).inc()
    log.error(
        "a transaction of a shape the watcher cannot read: skipped",
        extra={"network": network, "txid": tx.get("txid"), "error": repr(error)},
    )


class UtxoClient:
    unseen: frozenset[str] = frozenset()

    def __init__(self, network: str, rpc: JsonRpc):
        self.network = network
        self.rpc = rpc
        self._bech32 = BECH32_PREFIXES[network]
        self._mempool: dict[str, tuple[Output, ...]] = {}

    def normalize(self, address: str) -> str:
        """Bech32 in lower case (its one canonical spelling); base58 is case-sensitive and stays as it is."""
        lowered = address.strip().lower()
        if lowered.startswith(self._bech32) and address.strip() in (lowered, lowered.upper()):
            return lowered
        return address.strip()

    def tip(self) -> BlockRef:
        return _ref(self.rpc.call("getblockheader", self.rpc.call("getbestblockhash")))

    def block(self, height: int) -> BlockRef:
        decoded = self.rpc.call("getblock", self.block_hash(height), 2)
        return _ref(decoded, payload=decoded)

    def block_hash(self, height: int) -> str:
        try:
            return self.rpc.call("getblockhash", height)
        except RpcError as error:
            if error.code == OUT_OF_RANGE:  # a node behind the one that gave the tip
                raise BlockNotYet(str(error)) from None
            raise

    def transfers_in_block(self, block: BlockRef, watched: Container[str]) -> list[SeenTransfer]:
        decoded = block.payload or self.rpc.call("getblock", block.hash, 2)
        return match(decoded["tx"], watched, self.network)

    def pending_transfers(self, watched: Container[str]) -> list[SeenTransfer]:
        self._refresh_mempool()
        return [
            SeenTransfer(txid, index, address, None, amount)
            for txid, outs in self._mempool.items()
            for index, address, amount in outs
            if address in watched
        ]

    def balances(self, addresses: list[str], height: int) -> dict[str, int]:
        """From the UTXO set at the node's tip (`scantxoutset`: one scan for all, a few seconds on mainnet)."""
        found = self.rpc.call("scantxoutset", "start", [f"addr({address})" for address in addresses])
        if not found or not found.get("success", True):
            raise NodeError("scantxoutset did not complete (another scan running?)")
        totals = dict.fromkeys(addresses, 0)
        for unspent in found["unspents"]:
            address = unspent["desc"].partition("addr(")[2].partition(")")[0]
            if address in totals:
                totals[address] += to_base_units(unspent["amount"])
        return totals

    def address_activity(
        self, addresses: Collection[str], since_height: int
    ) -> list[tuple[SeenTransfer, BlockRef | None]]:
        only = {self.normalize(address) for address in addresses}
        found: list[tuple[SeenTransfer, BlockRef | None]] = [(seen, None) for seen in self.pending_transfers(only)]
        for height in range(since_height, self.rpc.call("getblockcount") + 1):
            block = self.block(height)
            found += [(seen, block) for seen in self.transfers_in_block(block, only)]
        return found

    def _refresh_mempool(self) -> None:
        listed = self.rpc.call("getrawmempool")
        for gone in self._mempool.keys() - set(listed):
            del self._mempool[gone]
        new = [txid for txid in listed if txid not in self._mempool]
        for start in range(0, len(new), BATCH):
            chunk = new[start : start + BATCH]
            for txid, tx in zip(
                chunk, self.rpc.batch([("getrawtransaction", [txid, True]) for txid in chunk]), strict=True
            ):
                if not isinstance(tx, RpcError):  # an error: it left the mempool meanwhile
                    self._mempool[txid] = readable_outputs(tx, self.network)


def _ref(header: dict, payload: dict | None = None) -> BlockRef:
    """The ref of a `getblockheader` or `getblock` answer (both carry the header's fields)."""
    return BlockRef(header["height"], header["hash"], header.get("previousblockhash", ""), header["time"], payload)
