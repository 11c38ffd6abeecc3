"""The backstop for every chain: each watched address's balance against the transfers seen paying it.

Every `WATCHER_BALANCE_CHECK_INTERVAL_S`, once a pass has reached the tip,
the active watcher asks the node for the balance of every watched address
(the network's own coin, and the token its watch expects where the client
reads tokens: ERC-20 and TRC-20 `balanceOf`) and compares it with the sum of
the transfers to it found in blocks up to the scanned height. More on the
chain than seen means something paid the address unseen (ETH or TRX sent by
a contract, a transaction the watcher could not read, a token payment in a
block no scan or look covered): a `balance_mismatch` event, on which
payments opens a review item. Less is money moved on (swept), not a fault.
Where the node reads balances at its tip only, a block mined between the
pass and the question could look unseen: a difference is reported only when
the next check, one pass later, finds it again.
"""

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from kernodeck_contracts.events import BalanceMismatch
from kernodeck_kit.units import Units
from kernodeck_watchers import metrics
from kernodeck_watchers.chains.base import ChainClient, TokenBalances
from kernodeck_watchers.unit import WatcherUnit

log = logging.getLogger(__name__)

BATCH = 100  # addresses per question to the node
Holding = tuple[str, str | None]  # (address, token contract), None for the network's own coin


class BalanceCheck:
    def __init__(self, network: str, interval_s: float, clock: Callable[[], datetime]):
        self.network = network
        self.interval = timedelta(seconds=interval_s)
        self.clock = clock
        self.next_at = clock() + self.interval
        self.suspects: dict[Holding, int] = {}  # (address, token) -> the balance a first check found unseen

    def due(self) -> bool:
        return bool(self.suspects) or self.clock() >= self.next_at

    def run(
        self, units: Units[WatcherUnit], client: ChainClient, addresses: list[str], height: int
    ) -> list[BalanceMismatch]:
        """Check `addresses` (only the suspects, when a first check found some) at `height`; the mismatches
        confirmed by a second look, each emitted."""
        confirming = bool(self.suspects)
        self.next_at = self.clock() + self.interval
        if confirming:
            holdings = sorted(self.suspects, key=_order)
        else:
            with units.transaction() as unit:
                tokens = unit.watched_tokens(sorted(addresses))
            holdings = [(a, None) for a in sorted(addresses)]
            if isinstance(client, TokenBalances):  # and the token each watch expects, where the client reads tokens
                holdings += sorted({(a, client.normalize(t)) for a, t in tokens})
        balances = _balances(client, holdings, height)
        with units.transaction() as unit:
            seen = unit.seen_in_blocks(sorted({a for a, _ in holdings}), height)
        unseen = {held: b for held, b in balances.items() if b > seen.get(held, 0)}
        if not confirming:
            self.suspects = unseen
            return []
        found = [
            BalanceMismatch(
                network=self.network, address=a, token=t, balance=b, seen=seen.get((a, t), 0), height=height
            )
            for (a, t), b in unseen.items()
            if (a, t) in self.suspects
        ]
        self.suspects = {}
        if found:
            with units.transaction() as unit:
                for mismatch in found:
                    unit.emit(mismatch)
            metrics.BALANCE_MISMATCHES.labels(self.network).inc(len(found))
            for mismatch in found:
                log.error(
                    "a watched address holds more than the transfers seen: payments opens a review",
                    extra={
                        "network": self.network,
                        "address": mismatch.address,
                        "token": mismatch.token,
                        "balance": mismatch.balance,
                        "seen": mismatch.seen,
                        "height": height,
                    },
                )
        return found


def _order(held: Holding) -> tuple[str, str]:
    return held[0], held[1] or ""


def _balances(client: ChainClient, holdings: list[Holding], height: int) -> dict[Holding, int]:
    """The balances of `holdings`, asked BATCH at a time: the network's own coin, then tokens."""
    coins = [address for address, token in holdings if token is None]
    tokens = [(address, token) for address, token in holdings if token is not None]
    balances: dict[Holding, int] = {}
    for start in range(0, len(coins), BATCH):
        balances |= {(a, None): b for a, b in client.balances(coins[start : start + BATCH], height).items()}
    for start in range(0, len(tokens), BATCH):
        balances |= client.token_balances(tokens[start : start + BATCH], height)
    return balances
