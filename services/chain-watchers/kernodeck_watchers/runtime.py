"""What one watcher process keeps between workers, and what each of its entrypoints does with it."""

import itertools
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import AddressWatched, WatcherStatus
from kernodeck_kit.types import utcnow
from kernodeck_kit.units import Units
from kernodeck_watchers import metrics
from kernodeck_watchers.balance_check import BalanceCheck
from kernodeck_watchers.chains.base import ChainClient, NodeError, Throttled, match_key
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.domain.progress import Progress, backoff_delay
from kernodeck_watchers.domain.watched import Watch
from kernodeck_watchers.leader import AdvisoryLock, SoleProcess
from kernodeck_watchers.scanner import CursorMoved, ReorgTooDeep, Scanner
from kernodeck_watchers.status import publish_status
from kernodeck_watchers.targeted import look_at
from kernodeck_watchers.unit import WatcherUnit
from kernodeck_watchers.watchlist import Watchlist

log = logging.getLogger(__name__)

NEW_WATCHES_PER_TURN = 100
RETRY_AFTER_CAP_S = 600.0  # a Retry-After longer than this is not believed


class EmptyDatabase(Exception):
    """No scan cursor while addresses are watched, and no start height named: nothing is scanned."""


PaymentsWatched = Callable[[], list[dict]]  # payments' watched_addresses(network) RPC


class WatcherRuntime:
    def __init__(self, settings: WatcherSettings, client: ChainClient, lock: AdvisoryLock | SoleProcess):
        self.settings = settings
        self.network = settings.network
        self.client = client
        self.lock = lock
        self.watchlist = Watchlist(self.network, client.normalize, settings.confirmations, match_key(client))
        self.progress = Progress(since=utcnow())
        self.failures = 0
        # Where the last complete pass started: a watch written during it (by another replica) may have
        # missed every block it scanned, however many.
        self._last_pass_from: int | None = None
        self._resume_at: datetime | None = None  # no request to the node before (a provider's Retry-After)
        # How many addresses payments watched when this process first loaded them: those whose payments may lie
        # in blocks before an empty database's first scan (watches announced later are looked up as new ones).
        self._watched_at_start: int | None = None
        self.balance_check = BalanceCheck(self.network, settings.balance_check_interval_s, utcnow)

    def turn(self, units: Units[WatcherUnit], payments_watched: PaymentsWatched) -> float:
        """One turn of the scan loop (a pass when this replica holds the lock); the seconds until the next."""
        if not self.lock.hold():
            self._stand_by()
            return self.settings.standby_retry_s
        metrics.ACTIVE.labels(self.network).set(1)
        now = utcnow()
        if self._resume_at is not None and now < self._resume_at:  # a provider's Retry-After, whatever wakes us
            return (self._resume_at - now).total_seconds()
        try:
            if self.watchlist.loaded:
                self.watchlist.sync(units, now)
            else:
                # Addresses whose events this watcher never got (it was not running yet) come from payments.
                from_payments = self.watchlist.from_payments(payments_watched(), now)
                self.watchlist.load(units, from_payments, now)
                self._begin_epoch(units, now)
                if self._watched_at_start is None:
                    self._watched_at_start = len(from_payments)
            if self.progress.scanned_height is None:
                self._check_start(units)
            pass_from = self.progress.scanned_height
            # New blocks first: a payment confirming now is not held up by the look at new watches, which
            # covers the blocks scanned before they were watched (this pass's, which matched them, included).
            scanner = self._scanner(units)
            scanner.run()
            if self._look_up_new_watches(units):
                scanner.recount()  # what the look found may have its confirmations already
            self._last_pass_from = pass_from
            self._check_balances(units)
        except ReorgTooDeep as error:
            log.error(
                "a reorganisation deeper than the remembered blocks: an operator must look",
                extra={"network": self.network},
            )
            self.progress.stuck = True
            return self._failed(error)
        except EmptyDatabase as error:
            log.error(str(error), extra={"network": self.network, "watched": self._watched_at_start})
            self.progress.stuck = self.progress.checked = True
            return self._failed(error)
        except NodeError as error:
            self.progress.node_failed(utcnow())
            return self._failed(error, getattr(error, "retry_after_s", None))
        except ServiceError as error:
            return self._failed(error)
        except CursorMoved:
            log.warning("another replica scanned meanwhile: standing by", extra={"network": self.network})
            self.lock.release()
            self._stand_by()
            return self.settings.standby_retry_s
        self.failures = 0
        return self.settings.poll_interval_s

    def watch(self, units: Units[WatcherUnit], event: AddressWatched) -> None:
        now = utcnow()
        row = self.watchlist.row(
            event.address, event.payment_id, event.watch_until, event.required_confirmations, event.token, now
        )
        self.watchlist.add(units, [row])

    def look_at(self, units: Units[WatcherUnit], address: str, payments_watched: PaymentsWatched) -> int:
        """ "J'ai payé" for `address`; a watch this watcher lacks is asked of payments first."""
        address = self.client.normalize(address)
        watch = self._watch(units, address)
        if watch is None:
            try:
                self.watchlist.add(units, self.watchlist.from_payments(payments_watched(), utcnow()))
            except ServiceError:
                log.warning("payments did not answer; looking anyway", extra={"network": self.network})
            watch = self._watch(units, address)
        required = watch.required_confirmations if watch else self.settings.confirmations
        return look_at(units, self.client, {address: required}, self.settings.targeted_check_blocks, utcnow)

    def report_status(self, units: Units[WatcherUnit]) -> WatcherStatus | None:
        """The active replica's status, once a pass has tried the node (payments treats silence as lag)."""
        if not self.lock.held or not self.progress.checked:
            return None
        limits = self.settings.lag_limits
        return publish_status(units, self.network, self.progress, limits, self.client.unseen, utcnow())

    def close(self) -> None:
        self.lock.close()

    def _begin_epoch(self, units: Units[WatcherUnit], now: datetime) -> None:
        """This replica's events come after everything emitted before it took over, from this database or from
        one it replaced (restored from a backup, moved, started empty): payments orders them by (epoch, sequence)."""
        with units.transaction() as unit:
            epoch = unit.begin_epoch(int(now.timestamp() * 1000))
        log.info("active: a new event epoch", extra={"network": self.network, "epoch": epoch})

    def _check_start(self, units: Units[WatcherUnit]) -> None:
        """An empty database (no scan cursor) while addresses are watched: the blocks their payments may be in
        are unknown, and the node's tip could be past them. The operator names the height (WATCHER_START_HEIGHT)."""
        if self.settings.start_height is not None or not self._watched_at_start:
            return
        with units.transaction() as unit:
            if unit.get_cursor() is None:
                raise EmptyDatabase(
                    "an empty watcher database while addresses are watched: set WATCHER_START_HEIGHT to the height"
                    " to scan from (at most the height of the oldest open payment's first block)"
                )

    def _check_balances(self, units: Units[WatcherUnit]) -> None:
        """The backstop (see balance_check), when due and the pass reached the node's tip."""
        progress = self.progress
        at_tip = progress.following and (progress.scanned_height or 0) >= (progress.node_height or 0)
        if at_tip and self.balance_check.due() and len(self.watchlist.watched):
            self.balance_check.run(units, self.client, list(self.watchlist.watched.addresses), progress.scanned_height)

    def _look_up_new_watches(self, units: Units[WatcherUnit]) -> int:
        """Addresses new to the set, in the blocks already scanned (see watchlist); a batch a turn. How many
        events that made."""
        batch = dict(itertools.islice(self.watchlist.unchecked.items(), NEW_WATCHES_PER_TURN))
        if not batch:
            return 0
        try:
            made = look_at(units, self.client, batch, self.settings.targeted_check_blocks, utcnow, self._last_pass_from)
        except Throttled:
            raise  # the provider asks for a pause, which the turn keeps; the batch is looked at after it
        except NodeError as error:  # kept for the next turn; the scan went on whatever the look does
            log.warning(
                "the look at new watches failed: the next turn tries again",
                extra={"network": self.network, "addresses": len(batch), "error": str(error)[:300]},
            )
            return 0
        self.watchlist.checked(batch)
        return made

    def _watch(self, units: Units[WatcherUnit], address: str) -> Watch | None:
        with units.transaction() as unit:
            return unit.get_watch(address)

    def _scanner(self, units: Units[WatcherUnit]) -> Scanner:
        return Scanner(
            units=units,
            client=self.client,
            watched=self.watchlist.watched,
            progress=self.progress,
            history_blocks=self.settings.history_blocks,
            start_height=self.settings.start_height,
            tip_delay=self.settings.tip_delay_blocks,
        )

    def _failed(self, error: Exception, retry_after_s: float | None = None) -> float:
        self.failures += 1
        delay = backoff_delay(self.failures, self.settings.backoff_initial_s, self.settings.backoff_max_s)
        if retry_after_s is not None:  # a throttling provider says when: honoured, up to RETRY_AFTER_CAP_S
            delay = max(delay, min(retry_after_s, RETRY_AFTER_CAP_S))
            self._resume_at = utcnow() + timedelta(seconds=delay)
        log.warning(
            "scan pass failed",
            extra={"network": self.network, "error": str(error), "failures": self.failures, "retry_in_s": delay},
        )
        return delay

    def _stand_by(self) -> None:
        self._last_pass_from = None
        if self.watchlist.loaded:
            self.watchlist.unload()
        metrics.ACTIVE.labels(self.network).set(0)
