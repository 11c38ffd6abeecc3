import pytest
from nameko.rpc import rpc
from nameko.standalone.rpc import ServiceRpcProxy

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.rpc import OrderSummary, Quote
from kernodeck_kit.testing import service_config, tap_events, truncate_all
from kernodeck_orders.config import OrdersSettings
from kernodeck_orders.service import OrdersService

# An order's summary: h100 for 3 days, 1 lot (189.00 USD).
SUMMARY = OrderSummary(
    model="h100",
    model_name="NVIDIA H100 SXM",
    backend="cuda",
    duration_days=3,
    lots=1,
    gpus_per_lot=1,
    total_gpus=1,
    preparation="ubuntu",
    lot_price_usd_cents=18900,
    total_usd_cents=18900,
)
# model -> (name, backend, GPUs per lot, lot price in cents per duration, lots free), as the catalog would price it.
CATALOG = {
    "h100": ("NVIDIA H100 SXM", "cuda", 1, {3: 18900, 7: 42000, 30: 159900}, 10),
    "b200": ("NVIDIA B200", "cuda", 2, {3: 89900, 7: 199900, 30: 749900}, 10),
}


class CatalogDouble:
    """The catalog's `quote` as orders calls it: a contracts `Quote` from `models`, or the catalog's refusal
    of an unknown model."""

    name = "catalog"
    models: dict = {}

    @rpc(expected_exceptions=ServiceError)
    def quote(self, model, duration_days, lots, preparation) -> dict:
        if model not in self.models:
            message = f"unknown model {model!r}"
            raise ServiceError(
                ErrorCode.VALIDATION_ERROR,
                "the order configuration is not valid",
                [{"field": "model", "message": message}],
            )
        name, backend, gpus_per_lot, prices, free = self.models[model]
        return Quote(
            model=model,
            model_name=name,
            backend=backend,
            duration_days=duration_days,
            lots=lots,
            gpus_per_lot=gpus_per_lot,
            total_gpus=gpus_per_lot * lots,
            preparation=preparation,
            lot_price_usd_cents=prices[duration_days],
            total_usd_cents=prices[duration_days] * lots,
            available=lots <= free,
        ).model_dump()


@pytest.fixture(scope="session")
def database_url(pg_database):
    return pg_database("kernodeck_orders")


@pytest.fixture
def config(rabbit_config, database_url):
    truncate_all(database_url)
    # The sweep runs only when a test asks for it.
    return service_config(rabbit_config, database_url, OrdersSettings(unpaid_ttl_minutes=60, sweep_interval_s=3600))


@pytest.fixture
def catalog(container_factory, config) -> dict:
    """The double's models, changeable by the test: {model: (name, backend, GPUs per lot, prices, lots free)}."""
    CatalogDouble.models = {model: (*entry[:3], dict(entry[3]), entry[4]) for model, entry in CATALOG.items()}
    container_factory(CatalogDouble, config).start()
    return CatalogDouble.models


@pytest.fixture
def orders_container(container_factory, config, catalog):
    container = container_factory(OrdersService, config)
    container.start()
    return container


@pytest.fixture
def orders(orders_container, config):
    with ServiceRpcProxy("orders", config) as proxy:
        yield proxy


@pytest.fixture
def events(config):
    with tap_events(config["AMQP_URI"], "orders") as tap:
        yield tap
