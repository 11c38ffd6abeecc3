"""The scan loop's turns: leadership, the watched set from payments and events, back-off, status."""

import itertools
import time
from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import AddressWatched, BalanceMismatch, ChainTransfer
from kernodeck_watchers.chains.base import NodeError, Throttled
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.runtime import WatcherRuntime

from ..memory import memory_units

pytestmark = pytest.mark.unit


class Lock:
    def __init__(self, free: bool = True):
        self.free = free
        self.held = False

    def hold(self) -> bool:
        self.held = self.held or self.free
        return self.held

    def release(self) -> None:
        self.held = False

    def close(self) -> None:
        self.release()


class Payments:
    """payments' watched_addresses(network) answer, or its absence."""

    def __init__(self):
        self.entries: list[dict] = []
        self.up = True
        self.calls = 0

    def __call__(self) -> list[dict]:
        self.calls += 1
        if not self.up:
            raise ServiceError(ErrorCode.SERVICE_UNAVAILABLE, "payments is not answering, try again")
        return self.entries

    def watch(self, address: str, required: int = 2) -> None:
        until = (datetime.now(UTC) + timedelta(days=7)).isoformat().replace("+00:00", "Z")
        self.entries.append(
            {
                "address": address,
                "payment_id": f"p-{address}",
                "token": None,
                "watch_until": until,
                "required_confirmations": required,
            }
        )


SETTINGS = WatcherSettings(
    network="bitcoin",
    poll_interval_s=0.5,
    standby_retry_s=2,
    backoff_initial_s=1,
    backoff_max_s=4,
    bitcoin_lag_blocks=2,
)


@pytest.fixture
def lock():
    return Lock()


@pytest.fixture
def payments():
    return Payments()


@pytest.fixture
def runtime(chain, lock):
    return WatcherRuntime(SETTINGS, chain, lock)


def test_the_first_turn_takes_the_watched_set_from_payments(chain, lock, units, payments, events, pay):
    runtime = WatcherRuntime(SETTINGS.model_copy(update={"start_height": chain.height + 1}), chain, lock)
    payments.watch("known-only-to-payments")
    assert runtime.turn(units, payments) == 0.5
    payment = pay("known-only-to-payments", 10)
    chain.mine(payment)
    runtime.turn(units, payments)
    assert events.kinds() == [("transfer_seen", payment.txid, 1)]
    assert payments.calls == 1  # later turns read the database only


def test_an_address_watched_event_counts_from_the_next_block(runtime, units, chain, payments, events, pay):
    runtime.turn(units, payments)
    runtime.watch(units, watched_event("NEW"))
    payment = pay("new", 10)
    chain.mine(payment)
    runtime.turn(units, payments)
    assert events.kinds() == [("transfer_seen", payment.txid, 1), ("transfer_confirmed", payment.txid, 1)]


def test_a_watch_written_by_another_replica_is_picked_up_by_the_active_one(chain, units, payments, events, pay):
    active, standby = WatcherRuntime(SETTINGS, chain, Lock()), WatcherRuntime(SETTINGS, chain, Lock(free=False))
    active.turn(units, payments)
    standby.watch(units, watched_event("b"))
    payment = pay("b", 3)
    chain.mine(payment)
    active.turn(units, payments)
    assert events.kinds()[0] == ("transfer_seen", payment.txid, 1)


def watched_event(address: str, required: int = 1) -> AddressWatched:
    until = datetime.now(UTC) + timedelta(days=1)
    return AddressWatched(
        network="bitcoin",
        address=address,
        payment_id=f"p-{address}",
        watch_until=until,
        required_confirmations=required,
    )


def test_a_payment_mined_before_its_watch_arrived_is_found_by_the_next_turn(
    runtime, units, chain, payments, events, pay
):
    runtime.turn(units, payments)
    payment = pay("late", 10)
    chain.mine(payment)
    runtime.turn(units, payments)  # the block is scanned before the watch comes
    assert events.kinds() == []
    runtime.watch(units, watched_event("late", required=2))
    runtime.turn(units, payments)
    assert events.kinds() == [("transfer_seen", payment.txid, 1)]
    chain.mine_empty()
    runtime.turn(units, payments)
    assert events.kinds() == [("transfer_confirmed", payment.txid, 2)]


def test_a_watch_another_replica_wrote_is_looked_up_too(chain, units, payments, events, pay):
    active, other = WatcherRuntime(SETTINGS, chain, Lock()), WatcherRuntime(SETTINGS, chain, Lock(free=False))
    active.turn(units, payments)
    payment = pay("b", 3)
    chain.mine(payment)
    active.turn(units, payments)
    other.watch(units, watched_event("b"))
    active.turn(units, payments)
    assert events.kinds() == [("transfer_seen", payment.txid, 1), ("transfer_confirmed", payment.txid, 1)]


def test_a_watch_written_during_a_long_pass_is_looked_up_in_every_block_of_that_pass(
    chain, units, payments, events, pay
):
    active, other = WatcherRuntime(SETTINGS, chain, Lock()), WatcherRuntime(SETTINGS, chain, Lock(free=False))
    active.turn(units, payments)
    payment = pay("b", 3)
    chain.mine(payment)
    chain.mine_empty(SETTINGS.targeted_check_blocks + 5)  # a catch-up pass, longer than the look's depth
    chain.then["block"] = lambda: other.watch(units, watched_event("b"))  # mid-pass, on the other replica
    active.turn(units, payments)
    assert events.kinds() == []
    active.turn(units, payments)
    assert [kind for kind, txid, _ in events.kinds() if txid == payment.txid] == ["transfer_seen", "transfer_confirmed"]


def test_new_watches_are_looked_up_once_and_again_after_a_node_error(runtime, units, chain, payments, events, pay):
    runtime.turn(units, payments)
    payment = pay("late", 10)
    chain.mine(payment)
    runtime.turn(units, payments)
    runtime.watch(units, watched_event("late", required=5))
    chain.down = True
    runtime.turn(units, payments)
    chain.down = False
    runtime.turn(units, payments)
    assert events.kinds() == [("transfer_seen", payment.txid, 1)]
    chain.calls.clear()
    runtime.turn(units, payments)
    assert "address_activity" not in chain.calls


def test_a_new_block_is_scanned_before_the_look_at_new_watches(runtime, units, chain, payments, events, pay):
    """A payment confirming now is not held up by the look at addresses just watched; that look still covers
    the block the scan matched them in, where it finds nothing new."""
    runtime.turn(units, payments)
    runtime.watch(units, watched_event("paying"))
    runtime.watch(units, watched_event("new"))
    payment = pay("paying", 10)
    chain.mine(payment)
    chain.calls.clear()
    runtime.turn(units, payments)
    assert chain.calls.index("address_activity") > chain.calls.index("block")
    assert events.kinds() == [("transfer_seen", payment.txid, 1), ("transfer_confirmed", payment.txid, 1)]
    assert runtime.watchlist.unchecked == {}


def test_a_failing_look_at_new_watches_never_stops_the_scan(runtime, units, chain, payments, events, pay, monkeypatch):
    runtime.turn(units, payments)
    runtime.watch(units, watched_event("new"))
    runtime.watch(units, watched_event("scanned"))
    refused = NodeError("eth_getLogs: query exceeds max block range")
    monkeypatch.setattr(chain, "address_activity", lambda addresses, since: (_ for _ in ()).throw(refused))
    payment = pay("scanned", 10)
    chain.mine(payment)
    assert runtime.turn(units, payments) == 0.5  # not a failed turn: the scan ran
    assert events.kinds() == [("transfer_seen", payment.txid, 1), ("transfer_confirmed", payment.txid, 1)]
    assert "new" in runtime.watchlist.unchecked  # looked at again next turn


def test_a_throttled_look_at_new_watches_pauses_the_turn(runtime, units, chain, payments, monkeypatch):
    runtime.turn(units, payments)
    runtime.watch(units, watched_event("new"))
    throttled = Throttled("HTTP 429", retry_after_s=3)
    monkeypatch.setattr(chain, "address_activity", lambda addresses, since: (_ for _ in ()).throw(throttled))
    assert runtime.turn(units, payments) == 3  # the provider's Retry-After, not the poll interval
    assert "new" in runtime.watchlist.unchecked


def test_a_replica_taking_over_looks_up_the_watches_added_lately(chain, units, payments, events, pay):
    payments.watch("old")
    first = WatcherRuntime(SETTINGS.model_copy(update={"start_height": chain.height + 1}), chain, Lock())
    first.turn(units, payments)
    assert "address_activity" not in chain.calls  # payments' answer at start is not looked up
    payment = pay("recent", 4)
    chain.mine(payment)
    first.turn(units, payments)
    first.watchlist.add(
        units, [first.watchlist.row("recent", "p", datetime.now(UTC) + timedelta(days=1), 1, None, datetime.now(UTC))]
    )
    first.watchlist.unload()  # it dies before its next turn
    successor = WatcherRuntime(SETTINGS, chain, Lock())
    successor.turn(units, payments)
    assert events.kinds() == [("transfer_seen", payment.txid, 1), ("transfer_confirmed", payment.txid, 1)]


def test_an_empty_database_while_addresses_are_watched_scans_nothing_until_a_start_height_is_named(
    runtime, chain, lock, units, payments, events, pay
):
    payments.watch("paid-before-the-database-was-replaced")
    payment = pay("paid-before-the-database-was-replaced", 10)
    chain.mine(payment)
    chain.mine_empty(3)
    assert runtime.turn(units, payments) == 1  # refused: backs off
    assert "tip" not in chain.calls
    assert runtime.report_status(units).lagging
    named = WatcherRuntime(SETTINGS.model_copy(update={"start_height": chain.height - 3}), chain, lock)
    assert named.turn(units, payments) == 0.5
    assert events.kinds() == [("transfer_seen", payment.txid, 4), ("transfer_confirmed", payment.txid, 4)]


def test_each_replica_taking_over_emits_in_a_later_epoch_even_on_a_new_database(chain, units, payments, events, pay):
    payments.watch("a")
    settings = SETTINGS.model_copy(update={"start_height": chain.height + 1})
    first = WatcherRuntime(settings, chain, Lock())
    first.turn(units, payments)
    chain.mine(pay("a", 10))
    first.turn(units, payments)
    successor = WatcherRuntime(settings, chain, Lock())
    chain.mine(pay("a", 11))
    emitted = len(transfer_events(units))
    successor.turn(units, payments)
    older, newer = transfer_events(units)[:emitted], transfer_events(units)[emitted:]
    assert newer and min(newer) > max(older)
    after = max(newer)
    # Takeovers within one millisecond give epochs past the clock (one more than the last); a database replaced
    # starts from the clock alone, so the premise is a replacement that takes longer than that run of epochs.
    while int(time.time() * 1000) <= after[0]:  # the epoch is whole milliseconds, as below
        time.sleep(0.001)
    replaced = memory_units()  # the database replaced: its sequence starts again at 1
    chain.mine(pay("a", 12))
    WatcherRuntime(settings.model_copy(update={"start_height": chain.height}), chain, Lock()).turn(replaced, payments)
    (fresh,) = transfer_events(replaced)
    assert fresh[1] == 1 and fresh > after


def transfer_events(units) -> list[tuple[int, int]]:
    """(epoch, sequence) of the transfer events emitted, oldest first."""
    return [(e.epoch, e.sequence) for e in units.emitted if isinstance(e, ChainTransfer)]


def mismatches(units) -> list[tuple[str, int, int]]:
    return [(e.address, e.balance, e.seen) for e in units.of(BalanceMismatch)]


def test_a_balance_above_the_transfers_seen_is_reported_when_a_second_look_finds_it_too(
    chain, lock, units, payments, pay
):
    settings = SETTINGS.model_copy(update={"start_height": chain.height + 1, "balance_check_interval_s": 0.001})
    runtime = WatcherRuntime(settings, chain, lock)
    ticks = itertools.count()  # each look a second after the last: due at every turn, however fast the turns go
    runtime.balance_check.clock = lambda: datetime.now(UTC) + timedelta(seconds=next(ticks))
    payments.watch("a")
    runtime.turn(units, payments)
    chain.mine(pay("a", 10))
    for unseen in (0, -4):  # as seen; less (swept on): never a fault
        chain.unseen_balance["a"] = unseen
        runtime.turn(units, payments)
        runtime.turn(units, payments)
        assert mismatches(units) == []
    chain.unseen_balance["a"] = 5  # a block the pass had not read yet...
    runtime.turn(units, payments)
    chain.unseen_balance["a"] = 0  # ...scanned by the next one: nothing to report
    runtime.turn(units, payments)
    assert mismatches(units) == []
    chain.unseen_balance["a"] = 1  # paid unseen (ETH sent by a contract, say)
    runtime.turn(units, payments)
    assert mismatches(units) == []  # a first look only
    runtime.turn(units, payments)
    assert mismatches(units) == [("a", 11, 10)]


def test_no_status_before_a_pass_has_tried_the_node(runtime, units, chain, payments):
    assert runtime.report_status(units) is None  # not a guess: payments counts silence as lag after a while
    chain.down = True
    runtime.turn(units, payments)
    assert runtime.report_status(units).lagging


def test_a_status_during_the_first_pass_compares_the_tip_with_the_cursor(chain, units, payments, lock):
    runtime = WatcherRuntime(SETTINGS.model_copy(update={"start_height": chain.height - 1}), chain, lock)
    during = []
    # The first block asked for is where the scan starts; the second is scanned, the status reads meanwhile.
    chain.then["block"] = lambda: chain.then.update(block=lambda: during.append(runtime.report_status(units)))
    runtime.turn(units, payments)
    (status,) = during
    assert (status.node_height - status.scanned_height, status.lagging) == (2, False)


def test_a_standby_only_retries_the_lock(chain, units, payments, pay):
    standby = WatcherRuntime(SETTINGS, chain, Lock(free=False))
    assert standby.turn(units, payments) == 2
    assert chain.calls == [] and payments.calls == 0
    assert standby.report_status(units) is None


def test_node_errors_back_off_doubling_up_to_the_cap_then_recover(runtime, units, chain, payments):
    runtime.turn(units, payments)
    chain.down = True
    assert [runtime.turn(units, payments) for _ in range(4)] == [1, 2, 4, 4]
    status = runtime.report_status(units)  # a few failed answers are not an outage (progress has the limits)
    assert not status.lagging and status.node_height == chain.height
    chain.down = False
    assert runtime.turn(units, payments) == 0.5
    assert not runtime.report_status(units).lagging


def test_no_scan_before_payments_gave_the_watched_set(runtime, units, chain, payments):
    payments.up = False
    assert runtime.turn(units, payments) == 1
    assert "tip" not in chain.calls
    payments.up = True
    assert runtime.turn(units, payments) == 0.5
    assert "tip" in chain.calls


def test_the_status_reports_the_lag_in_blocks(runtime, units, chain, payments):
    runtime.turn(units, payments)
    runtime.progress.node_answered(chain.height + 3)  # the node is ahead of what was scanned
    status = runtime.report_status(units)
    assert (status.node_height - status.scanned_height, status.lagging) == (3, True)


def test_a_targeted_look_asks_payments_for_an_address_it_does_not_know(runtime, units, chain, payments, events, pay):
    runtime.turn(units, payments)
    payment = chain.send(pay("reported", 4))
    payments.watch("reported", required=5)
    assert runtime.look_at(units, "REPORTED", payments) == 1
    assert payments.calls == 2
    chain.mine()
    runtime.turn(units, payments)
    events.new()
    chain.mine_empty(4)
    runtime.turn(units, payments)
    assert events.kinds()[-1] == ("transfer_confirmed", payment.txid, 5)


def test_after_a_reorganisation_too_deep_the_status_lags_until_a_pass_reaches_the_tip(chain, units, payments, lock):
    runtime = WatcherRuntime(SETTINGS.model_copy(update={"history_blocks": 10}), chain, lock)
    runtime.turn(units, payments)
    chain.mine_empty(10)
    runtime.turn(units, payments)
    followed = list(chain.best)
    chain.reorg(10, *[[]] * 10)  # every remembered block orphaned
    assert runtime.turn(units, payments) == 1
    during = []
    chain.then["block_hash"] = lambda: during.append(runtime.report_status(units))  # the node answers meanwhile
    runtime.turn(units, payments)
    (status,) = during
    assert status.lagging
    chain.best = followed  # the node is back on the chain the watcher followed
    assert runtime.turn(units, payments) == 0.5
    assert not runtime.report_status(units).lagging
