"""Flows across services: each service a real nameko container on the broker, with its own PostgreSQL database.

Run under eventlet with the services' tests (`pytest -p kernodeck_kit.testing ... tests/integration`).
"""

import pytest
from nameko.standalone.rpc import ServiceRpcProxy

from kernodeck_catalog.config import DEFAULT_CATALOG, load_catalog_file
from kernodeck_catalog.service import CatalogService
from kernodeck_catalog.store import seed
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_orders.config import SWEEP_INTERVAL_S, UNPAID_TTL_MINUTES
from kernodeck_orders.service import OrdersService


@pytest.fixture(scope="session")
def databases(pg_database):
    return {name: pg_database(f"kernodeck_{name}") for name in ("catalog", "orders", "payments")}


@pytest.fixture
def configs(rabbit_config, databases) -> dict:
    """Each service's nameko config, on emptied databases (the catalog seeded from its file)."""
    for url in databases.values():
        truncate_all(url)
    seed(databases["catalog"], load_catalog_file(DEFAULT_CATALOG))
    CatalogService._cache = None
    return {
        "catalog": service_config(rabbit_config, databases["catalog"]),
        "orders": {
            **service_config(rabbit_config, databases["orders"]),
            UNPAID_TTL_MINUTES: 1440,
            SWEEP_INTERVAL_S: 3600,
        },
        "payments": service_config(rabbit_config, databases["payments"]),
    }


@pytest.fixture
def catalog_and_orders(container_factory, configs):
    for name, cls in (("catalog", CatalogService), ("orders", OrdersService)):
        container_factory(cls, configs[name]).start()


@pytest.fixture
def orders(catalog_and_orders, configs):
    with ServiceRpcProxy("orders", configs["orders"]) as proxy:
        yield proxy
