"""The pytest plugin's test databases and its tap on a service's events, on the real broker."""

import pytest
from nameko.standalone.events import event_dispatcher
from sqlalchemy import Column, Integer, MetaData, Table, inspect

from kernodeck_contracts.events import OrderStatusChanged
from kernodeck_kit.db import make_engine
from kernodeck_kit.testing import tap_events, wait_until

WIDGETS = Table("widgets", MetaData(), Column("id", Integer, primary_key=True))


def test_a_database_of_a_few_tables_holds_them_and_the_kits_own(pg_database):
    engine = make_engine(pg_database(tables=[WIDGETS]))
    try:
        assert sorted(inspect(engine).get_table_names()) == ["outbox", "processed_events", "widgets"]
    finally:
        engine.dispose()


def test_a_migrated_database_takes_no_extra_tables(pg_database):
    with pytest.raises(ValueError, match="migrations"):
        pg_database("kernodeck_example", tables=[WIDGETS])


def test_the_tap_counts_each_event_once_and_says_when_too_few_came(rabbit_config):
    dispatch = event_dispatcher(rabbit_config)
    paid = OrderStatusChanged(order_id="o1", account_id="a1", status="paid", previous_status="awaiting_payment")
    with tap_events(rabbit_config["AMQP_URI"], "orders") as tap:
        assert tap.of("order_status_changed") == []
        for event in (paid, paid):  # published twice, as the outbox may
            dispatch("orders", "order_status_changed", event.to_message())
        assert [e["order_id"] for e in tap.wait_for("order_status_changed")] == ["o1"]
        with pytest.raises(AssertionError, match="1 order_status_changed event"):
            tap.wait_for("order_status_changed", count=2, seconds=0.3)
        assert len(tap.of("order_status_changed")) == 1


def test_wait_until_gives_the_first_truthy_value_or_says_what_it_waited_for():
    answers = iter([None, 0, "found"])
    assert wait_until(lambda: next(answers)) == "found"
    with pytest.raises(AssertionError, match=r"after 0\.1s waiting for nothing"):
        wait_until(lambda: False, 0.1, "nothing")
