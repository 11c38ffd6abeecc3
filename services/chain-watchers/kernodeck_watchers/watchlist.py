"""The watched addresses: rows in the database, and in the active watcher a set to match outputs against.

Any replica may take an `address_watched` event and write the row; the
active one reads the rows added since its last pass (with some overlap, as
transactions commit out of order) and drops the watches that ended.

Addresses new to the set wait in `unchecked` until the watcher has looked
them up in the blocks it already scanned: a watch arrives a moment after its
address was shown, and a payment can be mined in that moment.
"""

from collections.abc import Callable
from datetime import datetime, timedelta

from kernodeck_kit.units import Units
from kernodeck_watchers.domain.watched import MatchKey, Watch, WatchedAddresses
from kernodeck_watchers.unit import WatcherUnit

# Longer than any transaction that adds a watch takes to commit.
OVERLAP = timedelta(minutes=5)


class Watchlist:
    def __init__(
        self, network: str, normalize: Callable[[str], str], default_required: int, key: MatchKey | None = None
    ):
        self.network = network
        self.normalize = normalize
        self.watched = WatchedAddresses(default_required, key)
        self.unchecked: dict[str, int] = {}  # address -> required confirmations
        self.loaded = False
        self.synced_at: datetime | None = None  # the start of the pass that last read the rows

    def row(
        self, address: str, payment_id: str, watch_until: datetime, required: int, token: str | None, now: datetime
    ) -> Watch:
        address = self.normalize(address)
        key = self.watched.key
        return Watch(
            address=address,
            match_key=None if key is None else key(address),
            payment_id=payment_id,
            token=token,
            watch_until=watch_until,
            required_confirmations=required,
            added_at=now,
        )

    def from_payments(self, entries: list[dict], now: datetime) -> list[Watch]:
        """Rows for what payments' `watched_addresses` RPC answered."""
        return [
            self.row(
                entry["address"],
                entry["payment_id"],
                datetime.fromisoformat(entry["watch_until"]),
                entry["required_confirmations"],
                entry.get("token"),
                now,
            )
            for entry in entries
        ]

    def add(self, units: Units[WatcherUnit], watches: list[Watch]) -> None:
        with units.transaction() as unit:
            unit.add_watches(watches)
        if self.loaded:
            for watch in watches:
                self._take(watch.address, watch.required_confirmations, watch.match_key)

    def load(self, units: Units[WatcherUnit], from_payments: list[Watch], now: datetime) -> None:
        """Everything watched, payments' answer included (addresses whose event this watcher never got).
        The watches added lately are unchecked: a replica that stopped may not have looked them up."""
        with units.transaction() as unit:  # before payments' answer is stored, which would look recent
            recent = {address: required for address, required, _ in unit.watched_added_since(now - OVERLAP, now)}
        self.add(units, from_payments)
        self.watched = self.watched.emptied()
        with units.transaction() as unit:
            for address, required, key in unit.live_watches(now):
                self.watched.add(address, required, key)
        self.unchecked = recent
        self.loaded, self.synced_at = True, now

    def sync(self, units: Units[WatcherUnit], now: datetime) -> None:
        with units.transaction() as unit:
            added = unit.watched_added_since(self.synced_at - OVERLAP, now)
            ended = unit.watches_ended(self.synced_at, now)
        for address in ended:
            self.drop(address)
        for address, required, key in added:
            self._take(address, required, key)
        self.synced_at = now

    def drop(self, address: str) -> None:
        """No longer match blocks against `address`, nor look it up in those already scanned."""
        self.watched.discard(address)
        self.unchecked.pop(address, None)

    def checked(self, addresses: dict[str, int]) -> None:
        for address in addresses:
            self.unchecked.pop(address, None)

    def unload(self) -> None:
        self.watched = self.watched.emptied()
        self.unchecked = {}
        self.loaded, self.synced_at = False, None

    def _take(self, address: str, required: int, key: str | None) -> None:
        if address not in self.watched.addresses:
            self.unchecked[address] = required
        self.watched.add(address, required, key)
