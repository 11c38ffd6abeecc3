"""Flows across services: each service a real nameko container on the broker, with its own PostgreSQL database.

Run under eventlet with the services' tests (`pytest -p kernodeck_kit.testing ... tests/integration`).
"""

import pytest
from nameko.standalone.rpc import ServiceRpcProxy

from kernodeck_catalog.config import DEFAULT_CATALOG, load_catalog_file
from kernodeck_catalog.service import CatalogService
from kernodeck_catalog.store import seed
from kernodeck_kit.doubles import ProvisioningDouble
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_orders.config import OrdersSettings
from kernodeck_orders.service import OrdersService
from kernodeck_payments.service import PaymentsService

# Payments' own fixtures (its settings, the rates file, the chain-event sender, the taps), around the real
# catalog and orders below instead of payments' doubles.
from services.payments.tests.conftest import (  # noqa: F401
    changed_settings,
    check_ledger,
    payments,
    payments_db,
    payments_events,
    payments_ready,
    rates_file,
    settings,
    start,
    watcher,
    write_rates,
)

# These flows race one account's many orders (50 for one balance, a payment per block): the per-account limits
# on orders are orders' own tests'.
ROOMY_ORDERS = OrdersSettings(unpaid_per_account=1000, created_per_window=1000)


@pytest.fixture(scope="session")
def databases(pg_database):
    return {name: pg_database(f"kernodeck_{name}") for name in ("catalog", "orders", "payments")}


@pytest.fixture
def configs(rabbit_config, databases, settings) -> dict:
    """Each service's nameko config, on emptied databases (the catalog seeded from its file)."""
    for url in databases.values():
        truncate_all(url)
    seed(databases["catalog"], load_catalog_file(DEFAULT_CATALOG))
    CatalogService._cache = None
    yield {
        "catalog": service_config(rabbit_config, databases["catalog"]),
        "orders": service_config(rabbit_config, databases["orders"], ROOMY_ORDERS),
        "payments": service_config(rabbit_config, databases["payments"], settings),
        "provisioning": {**rabbit_config, "serializer": "json"},
    }
    check_ledger(databases["payments"])


@pytest.fixture
def catalog_and_orders(container_factory, configs) -> dict:
    return start(container_factory, {"catalog": CatalogService, "orders": OrdersService}, configs)


@pytest.fixture
def running(container_factory, configs, catalog_and_orders) -> dict:
    # Provisioning's holds are a double here: its real flows are in tests/e2e.
    services = {"payments": PaymentsService, "provisioning": ProvisioningDouble.reset()}
    return {**catalog_and_orders, **start(container_factory, services, configs)}


@pytest.fixture
def orders(catalog_and_orders, configs):
    with ServiceRpcProxy("orders", configs["orders"]) as proxy:
        yield proxy


@pytest.fixture
def new_order(orders):
    """`new_order(account, model="h100", days=3, lots=1)` -> the order as orders.create_order returns it."""

    def create(account_id: str, model: str = "h100", days: int = 3, lots: int = 1) -> dict:
        return orders.create_order(account_id, model, days, lots, "ubuntu")

    return create
