"""The active watcher's watched addresses, shaped for matching.

Matching is one set lookup per output (a set probes one table where a dict
probes two). Most watches need the network's default confirmations, so only
the others are kept apart, in a small dict.
"""


class WatchedAddresses:
    def __init__(self, default_required: int):
        self.default_required = default_required
        self.addresses: set[str] = set()  # what the chain client matches against
        self._required: dict[str, int] = {}  # only where it is not the default

    def __len__(self) -> int:
        return len(self.addresses)

    def add(self, address: str, required: int) -> None:
        self.addresses.add(address)
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
