import time
import uuid

import eventlet
import pytest
from kombu import Connection, Exchange, Queue
from nameko.standalone.rpc import ServiceRpcProxy

from kernodeck_catalog.config import DEFAULT_CATALOG, load_catalog_file
from kernodeck_catalog.service import CatalogService
from kernodeck_catalog.store import seed
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_orders.config import SWEEP_INTERVAL_S, UNPAID_TTL_MINUTES
from kernodeck_orders.service import OrdersService


@pytest.fixture(scope="session")
def catalog_database_url(pg_database):
    return pg_database("kernodeck_catalog")


@pytest.fixture(scope="session")
def database_url(pg_database):
    return pg_database("kernodeck_orders")


@pytest.fixture
def config(rabbit_config, database_url):
    truncate_all(database_url)
    # The sweep runs only when a test asks for it.
    return {**service_config(rabbit_config, database_url), UNPAID_TTL_MINUTES: 60, SWEEP_INTERVAL_S: 3600}


@pytest.fixture
def catalog_container(container_factory, rabbit_config, catalog_database_url):
    truncate_all(catalog_database_url)
    seed(catalog_database_url, load_catalog_file(DEFAULT_CATALOG))
    container = container_factory(CatalogService, service_config(rabbit_config, catalog_database_url))
    container.start()
    CatalogService._cache = None
    return container


@pytest.fixture
def orders_container(container_factory, config, catalog_container):
    container = container_factory(OrdersService, config)
    container.start()
    return container


@pytest.fixture
def orders(orders_container, config):
    with ServiceRpcProxy("orders", config) as proxy:
        yield proxy


class EventTap:
    """What reaches a queue bound to every event the orders service publishes."""

    def __init__(self, queue):
        self.queue = queue
        self.received: list[tuple[str, dict]] = []

    def wait(self, event_type: str, count: int = 1, seconds: float = 5.0) -> list[dict]:
        """Payloads of `event_type` received so far, once there are `count` or `seconds` have passed."""
        deadline = time.monotonic() + seconds
        while True:
            matching = [payload for key, payload in self.received if key == event_type]
            if len(matching) >= count or time.monotonic() > deadline:
                return matching
            message = self.queue.get(no_ack=True)
            if message is None:
                eventlet.sleep(0.05)
            else:
                self.received.append((message.delivery_info["routing_key"], message.payload))


@pytest.fixture
def events(config):
    exchange = Exchange("orders.events", type="topic", durable=True)
    with Connection(config["AMQP_URI"]) as connection:
        queue = Queue(f"test-tap-{uuid.uuid4().hex}", exchange, routing_key="#", exclusive=True)(connection)
        queue.declare()
        yield EventTap(queue)
