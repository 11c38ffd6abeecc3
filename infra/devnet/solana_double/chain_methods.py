"""Slots, blocks and balances: getSlot, getBlockHeight, getLatestBlockhash, getBalance, getBlock, getBlocks,
getBlocksWithLimit. Defaults follow agave: commitment `finalized`; getBlock with `json` encoding, full
transaction details and rewards; getBlock and getBlocks refuse `processed`."""

from __future__ import annotations

from . import params as read
from .encoding import ENCODINGS, TRANSACTION_DETAILS, block_json
from .jsonrpc import INVALID_PARAMS, RpcError
from .ledger import MAX_PROCESSING_AGE, Ledger
from .params import with_context

MAX_BLOCK_RANGE = 500_000  # agave's MAX_GET_CONFIRMED_BLOCKS_RANGE
# agave's custom server errors (rpc-client-api custom_error.rs)
BLOCK_NOT_AVAILABLE = -32004
SLOT_SKIPPED = -32007


def getSlot(ledger: Ledger, params: list) -> int:
    return ledger.slot_at(read.commitment(read.config(params, 0)))


def getBlockHeight(ledger: Ledger, params: list) -> int:
    return ledger.block_at(read.commitment(read.config(params, 0))).block_height


def getLatestBlockhash(ledger: Ledger, params: list) -> dict:
    block = ledger.block_at(read.commitment(read.config(params, 0)))
    value = {"blockhash": block.blockhash, "lastValidBlockHeight": block.block_height + MAX_PROCESSING_AGE}
    return with_context(block.slot, value)


def getBalance(ledger: Ledger, params: list) -> dict:
    address = read.pubkey(read.arg(params, 0, str))
    slot = ledger.slot_at(read.commitment(read.config(params, 1)))
    return with_context(slot, ledger.balance(address, slot))


def getBlock(ledger: Ledger, params: list) -> dict:
    slot = read.slot(read.arg(params, 0, int))
    config = read.encoding_config(params, 1)
    commitment = read.commitment(config, at_least_confirmed=True)
    encoding = read.choice(config, "encoding", ENCODINGS, "json")
    details = read.choice(config, "transactionDetails", TRANSACTION_DETAILS, "full")
    block = ledger.blocks.get(slot)
    if block is None and slot <= ledger.slot_at("finalized"):
        raise RpcError(SLOT_SKIPPED, f"Slot {slot} was skipped, or missing due to ledger jump to recent snapshot")
    if block is None or slot > ledger.slot_at(commitment):
        raise RpcError(BLOCK_NOT_AVAILABLE, f"Block not available for slot {slot}")
    rewards = config.get("rewards", True)
    return block_json(block, encoding, details, rewards, config.get("maxSupportedTransactionVersion"))


def getBlocks(ledger: Ledger, params: list) -> list[int]:
    start = read.slot(read.arg(params, 0, int))
    end_or_config = params[1] if len(params) > 1 else None
    if isinstance(end_or_config, dict):
        end, config = None, end_or_config
    else:
        end, config = end_or_config, read.config(params, 2)
    newest = ledger.slot_at(read.commitment(config, at_least_confirmed=True))
    end = min(start + MAX_BLOCK_RANGE if end is None else read.slot(end), newest)
    if end - start > MAX_BLOCK_RANGE:
        raise RpcError(INVALID_PARAMS, f"Slot range too large; max {MAX_BLOCK_RANGE}")
    return [s for s in ledger.slots if start <= s <= end]


def getBlocksWithLimit(ledger: Ledger, params: list) -> list[int]:
    start = read.slot(read.arg(params, 0, int))
    limit = read.arg(params, 1, int)
    if limit > MAX_BLOCK_RANGE:
        raise RpcError(INVALID_PARAMS, f"Limit too large; max {MAX_BLOCK_RANGE}")
    newest = ledger.slot_at(read.commitment(read.config(params, 2), at_least_confirmed=True))
    return [s for s in ledger.slots if start <= s <= newest][:limit]


METHODS = {
    f.__name__: f
    for f in (getSlot, getBlockHeight, getLatestBlockhash, getBalance, getBlock, getBlocks, getBlocksWithLimit)
}
