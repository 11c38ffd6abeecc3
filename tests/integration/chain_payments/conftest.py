"""From payment instructions to a paid order through a real node, its watcher, payments and orders.

A chain's conftest gives `watcher_settings` (which network, which node), `payments_settings` and `method`
(the asset and network a customer pays with); `seed_payments` lets it put what payments needs in its
database before the services start (Solana's address pool). The watchers' own fixtures (their containers,
their database, the chain tap) come from the watchers' test suite.
"""

import importlib

import pytest
from nameko.standalone.rpc import ServiceRpcProxy

from kernodeck_catalog.config import DEFAULT_CATALOG, load_catalog_file
from kernodeck_catalog.service import CatalogService
from kernodeck_catalog.store import seed
from kernodeck_kit.doubles import ProvisioningDouble
from kernodeck_kit.operators import CommandRpcProxy
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_orders.service import OrdersService
from kernodeck_payments.service import PaymentsService
from services.payments.tests.conftest import RATES
from services.payments.tests.helpers import run_entrypoint
from tests.integration.conftest import ROOMY_ORDERS

ACCOUNT = "acc-e2e"


def watcher_fixtures(relative: str):
    """A conftest of the watchers' suite, imported under its dotted path (a hyphen is no bar to importlib), so
    that its relative imports resolve and pytest's own import of it, if any, is the same module."""
    return importlib.import_module("services.chain-watchers.tests." + relative.removesuffix(".py").replace("/", "."))


_watchers = watcher_fixtures("conftest.py")
devnet_installed = _watchers.devnet_installed
quick_settings = _watchers.quick_settings
runtime = _watchers.runtime
start_watcher = _watchers.start_watcher
takeover = _watchers.takeover
tap = _watchers.tap
wait = _watchers.wait
wait_until = _watchers.wait_until
watcher_config = _watchers.watcher_config
watcher_database = _watchers.watcher_database
watcher_db = _watchers.watcher_db


@pytest.fixture
def seed_payments():
    """`seed_payments(payments_database_url)`, run on the emptied database before the services start."""
    return lambda url: None


@pytest.fixture
def containers() -> dict:
    """The services' started containers by name (`stack` starts them)."""
    return {}


@pytest.fixture
def stack(container_factory, rabbit_config, databases, write_rates, payments_settings, seed_payments, containers):
    """catalog, orders and payments (and a double of provisioning's holds), started; their configs by name."""
    for url in databases.values():
        truncate_all(url)
    seed(databases["catalog"], load_catalog_file(DEFAULT_CATALOG))
    seed_payments(databases["payments"])
    CatalogService._cache = None
    configs = {
        "catalog": service_config(rabbit_config, databases["catalog"]),
        "orders": service_config(rabbit_config, databases["orders"], ROOMY_ORDERS),
        "payments": service_config(rabbit_config, databases["payments"], payments_settings),
    }
    for name, cls in (("catalog", CatalogService), ("orders", OrdersService), ("payments", PaymentsService)):
        containers[name] = container_factory(cls, configs[name])
        containers[name].start()
    container_factory(ProvisioningDouble.reset(), {**rabbit_config, "serializer": "json"}).start()
    return configs


@pytest.fixture
def configs(stack) -> dict:
    """The started services' configs, under the name the integration suite's fixtures (payments_events) read."""
    return stack


@pytest.fixture
def set_rates(containers, write_rates):
    """`set_rates(LTC="80")`: the operator's rates file with these changes, read by payments now."""

    def change(**changes: str) -> None:
        write_rates({**RATES, **changes})
        assert run_entrypoint(containers["payments"], "refresh_rates") == len(RATES)

    return change


@pytest.fixture
def payments(stack, wait):
    with CommandRpcProxy(stack["payments"], "cli:tests") as cluster:  # the review queue: as the operator command
        proxy = cluster.payments
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
        """A new 3-day h100 order (189 USD) and its payment intent with this asset on this network, once the
        method is offered (payments offers a network only after its watcher's first report)."""
        wait_until(
            lambda: self.method()["available"], 30.0, f"{self.asset} on {self.network} to be offered: {self.method()}"
        )
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
        return self.payments.list_reviews()["items"]


@pytest.fixture
def shop(orders, payments, method) -> Shop:
    """`method`, (asset, network), comes from the chain's conftest."""
    asset, network = method
    return Shop(orders, payments, asset, network)
