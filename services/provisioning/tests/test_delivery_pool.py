"""Deliveries run beside the workers: a service with one worker still answers while a node is prepared."""

import pytest
from sqlalchemy import text

from kernodeck_kit.db import make_engine
from kernodeck_kit.settings import SETTINGS_KEY
from services.provisioning.tests.conftest import customer_key, wait_until
from services.provisioning.tests.test_delivery import _try_hold, access_of, register


@pytest.fixture
def config(config):
    # One worker for everything, one delivery at a time: a delivery in the worker would take them both.
    return {**config, "max_workers": 1, SETTINGS_KEY: {**config[SETTINGS_KEY], "delivery_concurrency": 1}}


def rental_status(database_url, order_id):
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            return connection.execute(
                text("SELECT status FROM rentals WHERE order_id = :order_id"), {"order_id": order_id}
            ).scalar()
    finally:
        engine.dispose()


def started(database_url, order_id):
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            return connection.execute(
                text("SELECT delivery_lease_until IS NOT NULL FROM rentals WHERE order_id = :order_id"),
                {"order_id": order_id},
            ).scalar()
    finally:
        engine.dispose()


def test_the_service_answers_while_it_delivers_and_a_delivery_beyond_its_places_waits_for_the_sweep(
    provisioning, test_hosts, orders_events, database_url, tmp_path
):
    host = test_hosts(gpus=2)
    register(provisioning, host)
    created, paid = orders_events
    _, public = customer_key(tmp_path)
    for order_id in ("pool1", "pool2"):
        created(order_id, key=public)
        wait_until(lambda order_id=order_id: _try_hold(provisioning, order_id, 1), "the hold")
    paid("pool1")
    paid("pool2")
    wait_until(lambda: started(database_url, "pool1") or started(database_url, "pool2"), "a delivery to start")

    assert len(provisioning.list_nodes()) == 1  # answered by the one worker while the delivery runs
    assert {rental_status(database_url, "pool1"), rental_status(database_url, "pool2")} == {"delivering"}

    for order_id in ("pool1", "pool2"):
        assert wait_until(lambda order_id=order_id: access_of(provisioning, order_id), "the access", seconds=120)
