"""The active watcher's watched addresses, shaped for matching.

Matching is one set lookup per output (a set probes one table where a dict
probes two). Most watches need the network's default confirmations, so only
the others are kept apart, in a small dict.

Where a network's blocks name an address in another form than its watched
spelling (Tron's TRC-20 logs: the 20-byte account id, where the watch is the
base58check T... text), the set also keeps each address's key in that form,
so that a block is matched on the form it holds, without encoding it. The key
is hex text (as a watch row stores it, computed once when the watch is
written: decoding a million addresses would hold up a take-over); the set
keeps the number it names, which a block's hex in either case reads as.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

MatchKey = Callable[[str], str | None]  # an address's key in its network's other form, as hex; None: it has none


class KeyedAddresses(set[str]):
    """A set of addresses that also maps each one's key (as a number) to it (`keys`); `in` is the plain set's."""

    def __init__(self, key: MatchKey):
        super().__init__()
        self.key = key
        self.keys: dict[int, str] = {}

    def add(self, address: str, key: str | None = None) -> None:
        """`key`: the address's key as stored with its watch; computed here where there is none."""
        if address not in self and (key := key or self.key(address)) is not None:
            self.keys[int(key, 16)] = address
        super().add(address)

    def discard(self, address: str) -> None:
        if address in self and (key := self.key(address)) is not None:
            self.keys.pop(int(key, 16), None)
        super().discard(address)


class WatchedAddresses:
    def __init__(self, default_required: int, key: MatchKey | None = None):
        self.default_required = default_required
        self.key = key
        # what the chain client matches against
        self.addresses: set[str] = set() if key is None else KeyedAddresses(key)
        self._required: dict[str, int] = {}  # only where it is not the default

    def __len__(self) -> int:
        return len(self.addresses)

    def add(self, address: str, required: int, key: str | None = None) -> None:
        """`key`: the address's match key as stored with its watch, if it has one."""
        if self.key is None:
            self.addresses.add(address)
        else:
            self.addresses.add(address, key)
        if required == self.default_required:
            self._required.pop(address, None)
        else:
            self._required[address] = required

    def discard(self, address: str) -> None:
        self.addresses.discard(address)
        self._required.pop(address, None)

    def required(self, address: str) -> int:
        """The confirmations a transfer to `address` needs (the default for one not watched)."""
        return self._required.get(address, self.default_required)

    def emptied(self) -> "WatchedAddresses":
        """A new, empty set with the same default and key."""
        return WatchedAddresses(self.default_required, self.key)


@dataclass(frozen=True)
class Watch:
    """An address payments watches, until `watch_until`; `match_key` as MatchKey makes it, computed once."""

    address: str
    match_key: str | None
    payment_id: str
    token: str | None
    watch_until: datetime
    required_confirmations: int
    added_at: datetime


Live = tuple[str, int, str | None]  # a live watch as the watched set takes it: (address, required, match key)
