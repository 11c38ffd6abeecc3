"""The watcher's nameko entrypoints: thin, over the WatcherRuntime and the SQL unit. One service per network
(`watcher_<network>`)."""

from kernodeck_contracts.clients import PaymentsClient
from kernodeck_contracts.events import AddressWatched, PaymentReported
from kernodeck_kit.timers import configured_timer
from kernodeck_kit.transport.dependencies import Database, Instrumented
from kernodeck_kit.transport.events import consumer
from kernodeck_kit.transport.peers import Peer
from kernodeck_kit.transport.rpc import rpc
from kernodeck_kit.units import SqlUnits
from kernodeck_watchers.chains.base import NodeError
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.dependencies import Watcher
from kernodeck_watchers.loop import scan_loop
from kernodeck_watchers.store.unit import watcher_units


class WatcherService:
    name = "watcher"  # watcher_service() names each network's

    db = Database(source="chain")
    instrumented = Instrumented()
    watcher = Watcher()
    payments = Peer(PaymentsClient)

    @property
    def units(self) -> SqlUnits:
        return watcher_units(self.db, self.watcher.network)

    @rpc
    def health(self) -> dict:
        progress = self.watcher.progress
        return {
            "service": self.name,
            "network": self.watcher.network,
            "active": self.watcher.lock.held,
            "node_height": progress.node_height,
            "scanned_height": progress.scanned_height,
        }

    @consumer(AddressWatched)
    def on_address_watched(self, payload) -> None:
        event = AddressWatched.from_message(payload)
        if event.network == self.watcher.network:
            self.watcher.watch(self.units, event)

    @consumer(PaymentReported)
    def on_payment_reported(self, payload) -> int:
        event = PaymentReported.from_message(payload)
        if event.network != self.watcher.network:
            return 0
        try:
            return self.watcher.look_at(self.units, event.address, self._payments_watched)
        except NodeError:
            # Counted with the node's errors. Not retried: the customer may press again, and the
            # scans will find what is in new blocks anyway.
            return 0

    @scan_loop()
    def scan(self) -> float:
        return self.watcher.turn(self.units, self._payments_watched)

    @configured_timer(WatcherSettings, "status_interval_s")
    def report_status(self) -> None:
        self.watcher.report_status(self.units)

    def _payments_watched(self) -> list[dict]:
        """Every address payments watches on this network, page by page."""
        payments = self.payments.using(timeout=self.watcher.settings.payments_timeout_s)
        addresses, after = [], None
        while True:
            page = payments.watched_addresses(network=self.watcher.network, after=after)
            addresses.extend(page.addresses)
            after = page.next
            if after is None:
                return addresses


def watcher_service(network: str) -> type[WatcherService]:
    return type(f"WatcherService_{network}", (WatcherService,), {"name": f"watcher_{network}"})
