"""What the watcher tests of every chain share: watcher containers on the real broker and PostgreSQL, their
database, a tap on `chain.events`, and the real catalog, orders and payments services around them.

A chain's conftest gives `watcher_settings` (which network, which node) and, for the end-to-end tests,
`payments_settings` and `method` (the asset and network a customer pays with); `seed_payments` lets it
put what payments needs in its database before the services start (Solana's address pool).
"""

import json
import uuid
from datetime import UTC, datetime

import eventlet
import pytest
from kombu import Connection, Exchange, Queue
from nameko.standalone.rpc import ServiceRpcProxy
from sqlalchemy import text

from infra.devnet.nodes import AnvilNode, find_binary
from kernodeck_catalog.config import DEFAULT_CATALOG, load_catalog_file
from kernodeck_catalog.service import CatalogService
from kernodeck_catalog.store import seed
from kernodeck_kit import migrations
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_orders.service import OrdersService
from kernodeck_payments.service import PaymentsService
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.dependencies import Watcher
from kernodeck_watchers.runtime import WatcherRuntime
from kernodeck_watchers.service import watcher_service

# Watchers under test react within a fraction of a second: short polls, retries and back-offs.
QUICK = {
    "poll_interval_s": 0.1,
    "standby_retry_s": 0.2,
    "status_interval_s": 0.2,
    "backoff_initial_s": 0.1,
    "backoff_max_s": 0.5,
    "rpc_timeout_s": 5,
    "payments_timeout_s": 5,
}


RATES = {"BTC": "50000", "ETH": "2500", "USDT": "1", "USDC": "1", "TRX": "0.25", "SOL": "150", "LTC": "100"}
ACCOUNT = "acc-e2e"


def wait_until(predicate, seconds: float = 20.0, what: str = "the condition"):
    """Poll `predicate` every 20 ms; its first truthy value, or AssertionError after `seconds`."""
    deadline = eventlet.hubs.get_hub().clock() + seconds
    while not (value := predicate()):
        if eventlet.hubs.get_hub().clock() > deadline:
            raise AssertionError(f"timed out after {seconds}s waiting for {what}")
        eventlet.sleep(0.02)
    return value


@pytest.fixture
def store(tmp_path):
    """A SQLite store migrated with the service's own scripts, for tests without a broker."""
    url = f"sqlite:///{tmp_path / 'watcher.db'}"
    migrations.upgrade("kernodeck_watchers", url)
    engine = make_engine(url)
    yield Store(engine, "chain", relay=None)
    engine.dispose()


class Events:
    """The events the scanner wrote to the outbox, oldest first."""

    def __init__(self, store: Store):
        self.store = store
        self.read = 0

    def all(self) -> list[dict]:
        with self.store.engine.connect() as conn:
            rows = conn.execute(text("SELECT event_type, payload FROM outbox ORDER BY id")).all()
        return [{"type": kind, **json.loads(payload)} for kind, payload in rows]

    def new(self) -> list[dict]:
        """The events written since the last call."""
        every = self.all()
        fresh, self.read = every[self.read :], len(every)
        return fresh

    def kinds(self) -> list[tuple[str, str, int]]:
        """(type, txid, confirmations) of the new events."""
        return [(e["type"], e["txid"], e["confirmations"]) for e in self.new() if "txid" in e]


@pytest.fixture
def events(store) -> Events:
    """The scanner's outbox events, read as tests go."""
    return Events(store)


@pytest.fixture(scope="session")
def devnet_installed():
    if not AnvilNode.installed():
        pytest.skip("anvil is not installed: run infra/devnet/install.sh anvil")
    if find_binary("solcjs") is None:
        pytest.skip("solcjs is not installed: run infra/devnet/install.sh solc")


@pytest.fixture
def quick_settings():
    """`quick_settings(network, database_url, **fields)`: a watcher's settings for tests, QUICK with `fields`
    (the node, confirmations...) on top."""

    def settings(network: str, database_url: str, **fields) -> WatcherSettings:
        return WatcherSettings(network=network, database_url=database_url, **{**QUICK, **fields})

    return settings


@pytest.fixture
def wait():
    """`wait(predicate, seconds=20, what=...)`: poll until truthy (its value) or fail."""
    return wait_until


# --- the watcher ----------------------------------------------------------------


@pytest.fixture(scope="session")
def watcher_database(pg_database):
    return pg_database("kernodeck_watchers")


@pytest.fixture
def watcher_config(rabbit_config, watcher_database, watcher_settings) -> dict:
    truncate_all(watcher_database)
    return service_config(rabbit_config, watcher_database, watcher_settings)


@pytest.fixture
def start_watcher(container_factory, rabbit_config, watcher_database, watcher_config, watcher_settings):
    """`start_watcher(**settings)` -> a started watcher container (call again for another replica)."""

    def start(**changes):
        config = watcher_config
        if changes:
            config = service_config(rabbit_config, watcher_database, watcher_settings.model_copy(update=changes))
        container = container_factory(watcher_service(watcher_settings.network), config)
        container.start()
        return container

    return start


def runtime_of(container) -> WatcherRuntime:
    return next(dep for dep in container.dependencies if isinstance(dep, Watcher)).runtime


@pytest.fixture
def runtime():
    """`runtime(container)` -> that replica's WatcherRuntime (its lock, progress, watched set)."""
    return runtime_of


class WatcherDb:
    def __init__(self, url: str, network: str):
        self.engine = make_engine(url, pool_size=2)
        self.network = network

    def rows(self, sql: str, **params) -> list[dict]:
        with self.engine.begin() as conn:
            return [dict(row._mapping) for row in conn.execute(text(sql), {"network": self.network, **params})]

    def cursor_height(self) -> int | None:
        found = self.rows("SELECT height FROM scan_cursor WHERE network = :network")
        return found[0]["height"] if found else None

    def scanned_heights(self) -> list[int]:
        return [
            r["height"] for r in self.rows("SELECT height FROM scanned_blocks WHERE network = :network ORDER BY height")
        ]

    def watched(self) -> set[str]:
        return {r["address"] for r in self.rows("SELECT address FROM watched_addresses WHERE network = :network")}

    def close(self) -> None:
        self.engine.dispose()


@pytest.fixture
def watcher_db(watcher_database, watcher_settings):
    db = WatcherDb(watcher_database, watcher_settings.network)
    yield db
    db.close()


class ChainTap:
    """A queue of its own on `chain.events`: every event the watchers publish, in order."""

    def __init__(self, amqp_uri: str):
        self.connection = Connection(amqp_uri)
        queue = Queue(
            f"test-chain-tap-{uuid.uuid4().hex}",
            exchange=Exchange("chain.events", type="topic", durable=True),
            routing_key="#",
            exclusive=True,
        )
        self.queue = queue(self.connection.channel())
        self.queue.declare()
        self.seen: list[dict] = []

    def events(self, event_type: str | None = None) -> list[dict]:
        while (message := self.queue.get(no_ack=True, accept=["json"])) is not None:
            self.seen.append({"type": message.delivery_info["routing_key"], **message.payload})
        return [e for e in self.seen if event_type is None or e["type"] == event_type]

    def transfers(self, txid: str | None = None) -> list[dict]:
        return [e for e in self.events() if "txid" in e and txid in (None, e["txid"])]

    def wait_for(self, event_type: str, seconds: float = 20.0, **fields) -> dict:
        """The first `event_type` event whose payload has these field values."""

        def found():
            return next((e for e in self.events(event_type) if all(e[k] == v for k, v in fields.items())), None)

        return wait_until(found, seconds, f"{event_type} {fields}")

    def close(self) -> None:
        self.connection.release()


@pytest.fixture
def tap(rabbit_config):
    tap = ChainTap(rabbit_config["AMQP_URI"])
    yield tap
    tap.close()


# --- catalog, orders and payments -------------------------------------------------


@pytest.fixture(scope="session")
def stack_databases(pg_database):
    return {name: pg_database(f"kernodeck_{name}") for name in ("catalog", "orders", "payments")}


@pytest.fixture
def rates_file(tmp_path):
    """The operator's rates file that payments prices with (RATES, as of now)."""
    path = tmp_path / "rates.json"
    path.write_text(json.dumps({"as_of": datetime.now(UTC).isoformat(), "rates": RATES}))
    return path


@pytest.fixture
def seed_payments():
    """`seed_payments(payments_database_url)`, run on the emptied database before the services start."""
    return lambda url: None


@pytest.fixture
def stack(container_factory, rabbit_config, stack_databases, payments_settings, seed_payments):
    """catalog, orders and payments, started; their configs by name."""
    for url in stack_databases.values():
        truncate_all(url)
    seed(stack_databases["catalog"], load_catalog_file(DEFAULT_CATALOG))
    seed_payments(stack_databases["payments"])
    CatalogService._cache = None
    configs = {
        "catalog": service_config(rabbit_config, stack_databases["catalog"]),
        "orders": service_config(rabbit_config, stack_databases["orders"]),
        "payments": service_config(rabbit_config, stack_databases["payments"], payments_settings),
    }
    for name, cls in (("catalog", CatalogService), ("orders", OrdersService), ("payments", PaymentsService)):
        container_factory(cls, configs[name]).start()
    return configs


@pytest.fixture
def payments(stack, wait):
    with ServiceRpcProxy("payments", stack["payments"]) as proxy:
        wait(lambda: proxy.list_methods()[0]["reason"] != "rate_unavailable", what="payments' first rates")
        yield proxy


@pytest.fixture
def orders(stack):
    with ServiceRpcProxy("orders", stack["orders"]) as proxy:
        yield proxy


class Shop:
    """A customer's side: orders to pay, their payment instructions, their status."""

    def __init__(self, orders, payments, asset: str, network: str):
        self.orders = orders
        self.payments = payments
        self.asset = asset
        self.network = network

    def order_payment(self) -> tuple[dict, dict]:
        """A new 3-day h100 order (189 USD) and its payment intent with this asset on this network."""
        order = self.orders.create_order(ACCOUNT, "h100", 3, 1, "ubuntu")
        return order, self.payments.create_order_payment(ACCOUNT, order["id"], self.asset, self.network)

    def order_status(self, order: dict) -> str:
        return self.orders.get_order(ACCOUNT, order["id"])["status"]

    def wait_paid(self, order: dict, seconds: float = 20.0) -> None:
        wait_until(lambda: self.order_status(order) == "paid", seconds, "the order to be paid")

    def payment(self, payment: dict) -> dict:
        return self.payments.get_payment(ACCOUNT, payment["id"])

    def method(self) -> dict:
        return next(m for m in self.payments.list_methods() if (m["asset"], m["network"]) == (self.asset, self.network))

    def reviews(self) -> list[dict]:
        return self.payments.list_reviews()


@pytest.fixture
def shop(orders, payments, method) -> Shop:
    """`method`, (asset, network), comes from the chain's conftest."""
    asset, network = method
    return Shop(orders, payments, asset, network)
