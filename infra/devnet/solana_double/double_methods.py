"""Test-only methods that drive block production; a real node has none of them."""

from __future__ import annotations

from . import params as read
from .jsonrpc import INVALID_PARAMS, RpcError
from .ledger import Ledger


def double_produceBlocks(ledger: Ledger, params: list) -> int:
    """Produce blocks now (default 1); the first takes every queued transaction. Returns the newest slot."""
    ledger.produce_blocks(read.count(params))
    return ledger.slot_at("processed")


def double_skipSlots(ledger: Ledger, params: list) -> int:
    """Leave the next slots without a block. Returns the slot the next block will have."""
    ledger.skip_slots(read.count(params))
    return ledger.next_slot


def double_dropBlocks(ledger: Ledger, params: list) -> int:
    """Abandon the newest blocks as a fork (never finalized ones). Returns the newest slot left."""
    try:
        ledger.drop_blocks(read.count(params))
    except ValueError as e:
        raise RpcError(INVALID_PARAMS, f"Invalid params: {e}") from None
    return ledger.slot_at("processed")


METHODS = {f.__name__: f for f in (double_produceBlocks, double_skipSlots, double_dropBlocks)}
