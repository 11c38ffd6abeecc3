"""The catalog's use cases in memory: provisioning's capacity counts, and quotes that follow them."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_catalog.use_cases import apply_capacity, current_catalog
from kernodeck_contracts.events import CapacityChanged
from services.catalog.tests.memory import memory_units

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)


@pytest.fixture
def units(catalog_file):
    return memory_units(catalog_file)


def count(lots: int, at: datetime, model_id: str = "h100") -> CapacityChanged:
    return CapacityChanged(model_id=model_id, available_lots=lots, occurred_at=at)


def h100_lots(units) -> int:
    return current_catalog(units).models["h100"].available_lots


def test_a_count_sets_the_capacity_and_quotes_follow_it(units):
    assert apply_capacity(units, [count(2, T0)])
    assert h100_lots(units) == 2
    catalog = current_catalog(units)
    assert catalog.quote("h100", 3, 2, "ubuntu").available is True
    assert catalog.quote("h100", 3, 3, "ubuntu").available is False


def test_an_older_count_arriving_late_changes_nothing(units):
    apply_capacity(units, [count(2, T0)])
    assert not apply_capacity(units, [count(9, T0 - timedelta(seconds=5))])
    assert not apply_capacity(units, [count(9, T0)])  # the same moment is not newer
    assert h100_lots(units) == 2
    assert apply_capacity(units, [count(5, T0 + timedelta(seconds=1))])
    assert h100_lots(units) == 5


def test_a_count_delivered_twice_applies_once(units):
    first = count(2, T0)
    assert apply_capacity(units, [first])
    assert not apply_capacity(units, [first])


def test_a_negative_count_is_none_and_an_unknown_model_is_ignored(units):
    assert apply_capacity(units, [count(-3, T0)])
    assert h100_lots(units) == 0
    assert not apply_capacity(units, [count(4, T0, model_id="tpu-v5")])
    assert "tpu-v5" not in current_catalog(units).models


def test_counts_that_came_together_apply_once_each_and_the_newest_wins_whatever_their_order(units):
    newest, older = count(7, T0 + timedelta(seconds=3)), count(3, T0 + timedelta(seconds=1))
    assert apply_capacity(units, [count(5, T0 + timedelta(seconds=2)), newest, older, newest]) == 2
    assert h100_lots(units) == 7
    assert apply_capacity(units, [newest, count(1, T0 + timedelta(seconds=4))]) == 1
    assert h100_lots(units) == 1
