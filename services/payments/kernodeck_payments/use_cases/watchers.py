"""What the chain watchers say beyond transfers: each network's status (lagging, silent, what it cannot see), and
a watched address holding more than its watcher saw paying it.

The watcher's balance check (chain-watchers' balance_check) is the backstop for transfers it cannot see (ETH or
TRX sent by a contract, a transaction it could not read): such a balance becomes a review item for an operator,
one per address, token and balance, so the same difference told again changes nothing and a larger one is new.
"""

from datetime import datetime
from typing import Protocol

from kernodeck_contracts.events import BalanceMismatch, WatcherStatus
from kernodeck_kit.units import Units
from kernodeck_payments.domain.intents import PaymentIntent

MISMATCH = "balance_mismatch"


class WatchersUnit(Protocol):
    def record_watcher_status(self, event: WatcherStatus) -> None:
        """The network's watcher report, unless a newer one is recorded already."""

    def owner_of(self, network: str, address: str) -> PaymentIntent | None:
        """The intent that owns the address, if any (not locked: nothing of it changes here)."""

    def open_review(
        self, key: str, reason: str, now: datetime, intent_id: str | None = None, account_id: str | None = None
    ) -> bool:
        """Queue an item for an operator unless one with the same key exists; True when queued now."""


def watcher_status(units: Units[WatchersUnit], event: WatcherStatus) -> None:
    with units.transaction() as unit:
        unit.record_watcher_status(event)


def balance_mismatch(units: Units[WatchersUnit], event: BalanceMismatch, now: datetime) -> bool:
    """Queue the review item, with the intent owning the address when there is one; True when queued now."""
    asset = f"{event.token}:" if event.token else ""  # the network's own coin keeps its keys of before
    key = f"{MISMATCH}:{event.network}:{event.address}:{asset}{event.balance}"
    with units.transaction() as unit:
        owner = unit.owner_of(event.network, event.address)
        return unit.open_review(key, MISMATCH, now, owner.id if owner else None, owner.account_id if owner else None)
