import pytest
from nameko.rpc import rpc

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.rpc import Quote
from kernodeck_kit.operators import CommandRpcProxy
from kernodeck_kit.testing import service_config, tap_events, truncate_all
from kernodeck_support.config import SupportSettings
from kernodeck_support.service import SupportService

LOT_PRICES = {3: 18900, 7: 42000, 30: 159900}  # h100, as the catalog prices a lot


class OrdersDouble:
    """orders' `get_order` as support calls it: the owner's order, not_found for anyone else."""

    name = "orders"
    orders: dict = {}

    @rpc(expected_exceptions=ServiceError)
    def get_order(self, account_id, order_id) -> dict:
        order = self.orders.get(order_id)
        if order is None or order["account_id"] != account_id:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
        return order


class CatalogDouble:
    name = "catalog"

    @rpc(expected_exceptions=ServiceError)
    def quote(self, model, duration_days, lots, preparation) -> dict:
        price = LOT_PRICES[duration_days]
        return Quote(
            model=model, model_name="NVIDIA H100 SXM", backend="cuda", duration_days=duration_days, lots=lots,
            gpus_per_lot=1, total_gpus=lots, preparation=preparation, lot_price_usd_cents=price,
            total_usd_cents=price * lots, available=True,
        ).model_dump()  # fmt: skip


def an_order(order_id, account_id, status="ready", lots=2, ends_at="2099-01-01T00:00:00Z") -> dict:
    return {
        "id": order_id,
        "account_id": account_id,
        "status": status,
        "summary": {"model": "h100", "lots": lots, "preparation": "pytorch"},
        "rental": {"ends_at": ends_at},
    }


@pytest.fixture(scope="session")
def database_url(pg_database):
    return pg_database("kernodeck_support")


@pytest.fixture
def config(rabbit_config, database_url):
    truncate_all(database_url)
    return service_config(rabbit_config, database_url, SupportSettings())


@pytest.fixture
def neighbours(container_factory, config) -> dict:
    """The orders double's orders, changeable by the test."""
    OrdersDouble.orders = {}
    container_factory(OrdersDouble, config).start()
    container_factory(CatalogDouble, config).start()
    return OrdersDouble.orders


@pytest.fixture
def support(container_factory, config, neighbours):
    container_factory(SupportService, config).start()
    with CommandRpcProxy(config, "cli:tests") as cluster:  # operator RPCs among them: as the command
        yield cluster.support


@pytest.fixture
def events(config):
    with tap_events(config["AMQP_URI"], "support") as tap:
        yield tap
