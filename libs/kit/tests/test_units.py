"""Units of work in memory and on the database: the same transaction and consumer semantics."""

import json

import pytest
from sqlalchemy import func, select
from sqlmodel import SQLModel

from kernodeck_contracts.events import CapacityChanged, OrderStatusChanged
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.tables import OutboxMessage, ProcessedEvent
from kernodeck_kit.units import MemoryUnits, SqlUnit, SqlUnits

pytestmark = pytest.mark.unit


def changed(order_id: str) -> OrderStatusChanged:
    return OrderStatusChanged(order_id=order_id, account_id="a1", status="paid", previous_status="awaiting_payment")


class Counter:
    """A unit over a dict of counts."""

    def __init__(self, counts: dict, emit):
        self.counts = counts
        self.emit = emit

    def bump(self, key: str) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1


@pytest.fixture
def units() -> MemoryUnits:
    return MemoryUnits("orders", {}, Counter)


def test_a_transaction_keeps_its_changes_and_its_events_once_it_ends(units):
    with units.transaction() as unit:
        unit.bump("o1")
        unit.emit(changed("o1"))
        assert units.state == {} and units.emitted == []
    assert units.state == {"o1": 1}
    assert [event.order_id for event in units.of(OrderStatusChanged)] == ["o1"]


def test_a_transaction_that_fails_leaves_nothing(units):
    with pytest.raises(RuntimeError), units.transaction() as unit:
        unit.bump("o1")
        unit.emit(changed("o1"))
        raise RuntimeError("refused")
    assert (units.state, units.emitted) == ({}, [])


def test_a_service_emits_only_its_own_events(units):
    with (
        pytest.raises(ValueError, match=r"orders cannot emit provisioning\.capacity_changed"),
        units.transaction() as unit,
    ):
        unit.emit(CapacityChanged(model_id="h100", available_lots=1))


def test_an_event_is_applied_once_and_again_after_a_failure(units):
    event = changed("o1")
    with pytest.raises(RuntimeError), units.consume(event) as unit:
        unit.bump("o1")
        raise RuntimeError("the database is down")
    for _ in range(2):
        with units.consume(event) as unit:
            if unit is not None:
                unit.bump("o1")
    assert units.state == {"o1": 1}


def test_sql_units_apply_an_event_once_and_emit_through_the_outbox(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'units.db'}")
    SQLModel.metadata.create_all(engine, tables=[OutboxMessage.__table__, ProcessedEvent.__table__])
    units = SqlUnits(Store(engine, "orders", relay=None), SqlUnit)
    event = changed("o1")
    applied = []
    for _ in range(2):
        with units.consume(event) as unit:
            if unit is not None:
                unit.emit(changed("o2"))
                applied.append(event.event_id)
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(OutboxMessage)).scalar_one() == 1
    assert applied == [event.event_id]
    engine.dispose()


def test_events_consumed_together_are_each_applied_once_all_or_none(units):
    first, second, third = changed("o1"), changed("o2"), changed("o3")
    with pytest.raises(RuntimeError), units.consume_each([first, second]) as (unit, fresh):
        unit.bump("o1")
        raise RuntimeError("the database is down")
    with units.consume_each([first, second, first]) as (unit, fresh):
        assert fresh == [first, second]  # the failed batch left nothing; the repeat inside it counts once
        for event in fresh:
            unit.bump(event.order_id)
    with units.consume_each([second, third]) as (unit, fresh):
        assert fresh == [third]
        unit.bump(third.order_id)
    assert units.state == {"o1": 1, "o2": 1, "o3": 1}


def test_sql_units_consume_together_each_event_once(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'units.db'}")
    SQLModel.metadata.create_all(engine, tables=[OutboxMessage.__table__, ProcessedEvent.__table__])
    units = SqlUnits(Store(engine, "orders", relay=None), SqlUnit)
    first, second = changed("o1"), changed("o2")
    with units.consume_each([first]) as (_, fresh):
        assert fresh == [first]
    with units.consume_each([first, second, second]) as (_, fresh):
        assert fresh == [second]
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(ProcessedEvent)).scalar_one() == 2
    engine.dispose()


class Deferred(SqlUnit):
    """A unit that keeps its outbox rows for the end, as a unit writing many rows in one statement does."""

    def __init__(self, tx):
        super().__init__(tx)
        self.kept = []

    def done(self) -> None:
        for event in self.kept:
            self.emit(event)


def test_sql_units_write_what_a_unit_kept_for_its_end_only_when_it_ends_without_an_error(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'units.db'}")
    SQLModel.metadata.create_all(engine, tables=[OutboxMessage.__table__, ProcessedEvent.__table__])
    units = SqlUnits(Store(engine, "orders", relay=None), Deferred)
    with pytest.raises(RuntimeError), units.consume_each([changed("o1")]) as (unit, _):
        unit.kept.append(changed("o1"))
        raise RuntimeError("the database is down")
    with units.consume_each([changed("o2")]) as (unit, _):
        unit.kept.append(changed("o2"))
    with units.transaction() as unit:
        unit.kept.append(changed("o3"))
    with engine.connect() as conn:
        written = [json.loads(payload)["order_id"] for (payload,) in conn.execute(select(OutboxMessage.payload))]
    assert sorted(written) == ["o2", "o3"]
    engine.dispose()


def test_a_consumer_is_known_by_its_event_class_or_by_the_key_it_was_given(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'units.db'}")
    SQLModel.metadata.create_all(engine, tables=[OutboxMessage.__table__, ProcessedEvent.__table__])
    units = SqlUnits(Store(engine, "orders", relay=None), SqlUnit)
    status, capacity, kept = changed("o1"), CapacityChanged(model_id="h100", available_lots=1), changed("o2")
    with units.consume_each([status, capacity]) as (_, fresh):
        assert fresh == [status, capacity]
    with units.consume(kept, "notify") as unit:
        assert unit is not None
    with units.consume(kept) as unit:
        assert unit is not None  # another consumer's: "notify" applied it, not orders.order_status_changed's
    with engine.connect() as conn:
        rows = set(conn.execute(select(ProcessedEvent.consumer, ProcessedEvent.event_id)))
    assert rows == {
        ("orders.order_status_changed", status.event_id),
        ("provisioning.capacity_changed", capacity.event_id),
        ("notify", kept.event_id),
        ("orders.order_status_changed", kept.event_id),
    }
    engine.dispose()


def test_memory_units_know_a_consumer_as_sql_units_do(units):
    status, capacity = changed("o1"), CapacityChanged(model_id="h100", available_lots=1)
    with units.consume_each([status, capacity]) as (_, fresh):
        assert fresh == [status, capacity]
    with units.consume_each([capacity, status], "notify") as (_, fresh):
        assert fresh == [capacity, status]
    with units.consume(status) as unit:
        assert unit is None
    with units.consume(capacity, "notify") as unit:
        assert unit is None
