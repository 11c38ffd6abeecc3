"""What the watchers say beyond transfers, in memory: each network's latest status kept, and a balance their
transfers do not explain queued for an operator once per address, token and balance. test_reviews.py and
test_intents.py run the same use cases over the broker and PostgreSQL."""

from datetime import timedelta

import pytest

from kernodeck_contracts.events import BalanceMismatch, WatcherStatus
from kernodeck_payments.use_cases.watchers import balance_mismatch, watcher_status
from services.payments.tests.memory import watchers_units
from services.payments.tests.test_settlement import ADDRESS, T0, intent

pytestmark = pytest.mark.unit


def status(at, lagging=False) -> WatcherStatus:
    return WatcherStatus(
        network="bitcoin", node_height=110, scanned_height=100, lag_seconds=0, lagging=lagging, occurred_at=at
    )


def test_a_networks_newest_status_is_kept_and_an_older_one_arriving_late_is_not():
    units = watchers_units()
    watcher_status(units, status(T0))
    watcher_status(units, status(T0 + timedelta(seconds=10), lagging=True))
    watcher_status(units, status(T0 + timedelta(seconds=5)))
    assert units.state.reports["bitcoin"].lagging is True


def mismatch(balance: int, token: str | None = None, address: str = ADDRESS) -> BalanceMismatch:
    return BalanceMismatch(network="bitcoin", address=address, balance=balance, seen=0, height=100, token=token)


def test_a_balance_mismatch_is_queued_once_per_address_token_and_balance_with_its_owner():
    units = watchers_units(intent())
    assert balance_mismatch(units, mismatch(5_000), T0)
    assert not balance_mismatch(units, mismatch(5_000), T0)  # told again
    assert balance_mismatch(units, mismatch(7_000), T0)  # a larger difference is new
    assert balance_mismatch(units, mismatch(5_000, token="T1"), T0)
    assert units.state.reviews == {
        f"balance_mismatch:bitcoin:{ADDRESS}:5000": ("balance_mismatch", "pi1", "acc1"),
        f"balance_mismatch:bitcoin:{ADDRESS}:7000": ("balance_mismatch", "pi1", "acc1"),
        f"balance_mismatch:bitcoin:{ADDRESS}:T1:5000": ("balance_mismatch", "pi1", "acc1"),
    }


def test_a_balance_mismatch_on_an_address_no_intent_owns_is_queued_without_a_customer():
    units = watchers_units(intent())
    assert balance_mismatch(units, mismatch(1, address="bc1qother"), T0)
    assert units.state.reviews == {"balance_mismatch:bitcoin:bc1qother:1": ("balance_mismatch", None, None)}
