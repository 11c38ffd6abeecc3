"""The backstop for every chain: each watched address's balance against the transfers seen paying it.

Every `WATCHER_BALANCE_CHECK_INTERVAL_S`, once a pass has reached the tip,
the active watcher asks the node for the balance (the network's own coin) of
every watched address and compares it with the sum of the transfers to it
found in blocks up to the scanned height. More on the chain than seen means
something paid the address unseen (ETH or TRX sent by a contract, a
transaction the watcher could not read): a `balance_mismatch` event, on
which payments opens a review item. Less is money moved on (swept), not a
fault. Where the node reads balances at its tip only, a block mined between
the pass and the question could look unseen: a difference is reported only
when the next check, one pass later, finds it again.
"""

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from kernodeck_contracts.events import BalanceMismatch
from kernodeck_kit.outbox import Store
from kernodeck_watchers import metrics
from kernodeck_watchers.chains.base import ChainClient
from kernodeck_watchers.store.queries import seen_in_blocks

log = logging.getLogger(__name__)

BATCH = 100  # addresses per question to the node


class BalanceCheck:
    def __init__(self, network: str, interval_s: float, clock: Callable[[], datetime]):
        self.network = network
        self.interval = timedelta(seconds=interval_s)
        self.clock = clock
        self.next_at = clock() + self.interval
        self.suspects: dict[str, int] = {}  # address -> the balance a first check found unseen

    def due(self) -> bool:
        return bool(self.suspects) or self.clock() >= self.next_at

    def run(self, store: Store, client: ChainClient, addresses: list[str], height: int) -> list[BalanceMismatch]:
        """Check `addresses` (only the suspects, when a first check found some) at `height`; the mismatches
        confirmed by a second look, each emitted."""
        confirming = bool(self.suspects)
        wanted = sorted(self.suspects) if confirming else sorted(addresses)
        self.next_at = self.clock() + self.interval
        balances: dict[str, int] = {}
        for start in range(0, len(wanted), BATCH):
            balances |= client.balances(wanted[start : start + BATCH], height)
        with store.read() as session:
            seen = seen_in_blocks(session, self.network, wanted, height)
        unseen = {a: b for a, b in balances.items() if b > seen.get(a, 0)}
        if not confirming:
            self.suspects = unseen
            return []
        found = [
            BalanceMismatch(network=self.network, address=a, balance=b, seen=seen.get(a, 0), height=height)
            for a, b in unseen.items()
            if a in self.suspects
        ]
        self.suspects = {}
        if found:
            with store.transaction() as tx:
                for mismatch in found:
                    tx.emit(mismatch)
            metrics.BALANCE_MISMATCHES.labels(self.network).inc(len(found))
            for mismatch in found:
                log.error(
                    "a watched address holds more than the transfers seen: payments opens a review",
                    extra={
                        "network": self.network,
                        "address": mismatch.address,
                        "balance": mismatch.balance,
                        "seen": mismatch.seen,
                        "height": height,
                    },
                )
        return found
