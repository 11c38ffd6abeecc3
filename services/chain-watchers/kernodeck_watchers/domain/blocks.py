"""A block and a transfer as a chain client reports them: plain data the rules work on."""

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BlockRef:
    height: int
    hash: str
    parent_hash: str
    time: int  # block timestamp, seconds since the epoch
    # What the client fetched to make the ref (the block's contents), for `transfers_in_block` to reuse; not part
    # of the block's identity. None: the client reads the block again, by its hash.
    payload: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class SeenTransfer:
    txid: str
    index: int  # output index (UTXO), log index (tokens), 0 for a native account transfer
    address: str
    token: str | None
    amount: int


@dataclass(frozen=True)
class Cursor:
    """The newest block scanned; every block up to it is scanned."""

    height: int
    hash: str
