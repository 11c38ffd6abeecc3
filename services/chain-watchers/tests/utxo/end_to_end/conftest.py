"""The real catalog, orders and payments containers next to the watcher, payments on regtest settings."""

import json
from datetime import UTC, datetime

import pytest
from nameko.standalone.rpc import ServiceRpcProxy

from kernodeck_catalog.config import DEFAULT_CATALOG, load_catalog_file
from kernodeck_catalog.service import CatalogService
from kernodeck_catalog.store import seed
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_orders.service import OrdersService
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.service import PaymentsService

# A BIP84 testnet account key (vpub) from a public test mnemonic: never for real money.
REGTEST_KEY = (
    "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"
)
RATES = {"BTC": "50000", "ETH": "2500", "USDT": "1", "USDC": "1", "TRX": "0.25", "SOL": "150", "LTC": "100"}
ACCOUNT = "acc-e2e"


@pytest.fixture(scope="session")
def stack_databases(pg_database):
    return {name: pg_database(f"kernodeck_{name}") for name in ("catalog", "orders", "payments")}


@pytest.fixture
def payments_settings(tmp_path, stack_databases, watcher_settings) -> PaymentsSettings:
    rates_file = tmp_path / "rates.json"
    rates_file.write_text(json.dumps({"as_of": datetime.now(UTC).isoformat(), "rates": RATES}))
    return PaymentsSettings(
        database_url=stack_databases["payments"],
        bitcoin_chain="regtest",
        litecoin_chain="regtest",
        bitcoin_xpub=REGTEST_KEY,
        litecoin_xpub=REGTEST_KEY,
        bitcoin_confirmations=watcher_settings.bitcoin_confirmations,
        litecoin_confirmations=watcher_settings.litecoin_confirmations,
        rate_sources="file",
        rate_file=rates_file,
        rate_refresh_s=3600,
        sweep_interval_s=3600,
    )


@pytest.fixture
def stack(container_factory, rabbit_config, stack_databases, payments_settings):
    """catalog, orders and payments, started; their configs by name."""
    for url in stack_databases.values():
        truncate_all(url)
    seed(stack_databases["catalog"], load_catalog_file(DEFAULT_CATALOG))
    CatalogService._cache = None
    configs = {
        "catalog": service_config(rabbit_config, stack_databases["catalog"]),
        "orders": {
            **service_config(rabbit_config, stack_databases["orders"]),
            "UNPAID_TTL_MINUTES": 1440,
            "SWEEP_INTERVAL_S": 3600,
        },
        "payments": {
            **service_config(rabbit_config, stack_databases["payments"]),
            **payments_settings.nameko_config(),
            "AMQP_URI": rabbit_config["AMQP_URI"],
        },
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

    def __init__(self, orders, payments, network: str):
        self.orders = orders
        self.payments = payments
        self.network = network
        self.asset = {"bitcoin": "BTC", "litecoin": "LTC"}[network]

    def order_payment(self) -> tuple[dict, dict]:
        """A new 3-day h100 order (189 USD) and its payment intent on this network."""
        order = self.orders.create_order(ACCOUNT, "h100", 3, 1, "ubuntu")
        return order, self.payments.create_order_payment(ACCOUNT, order["id"], self.asset, self.network)

    def order_status(self, order: dict) -> str:
        return self.orders.get_order(ACCOUNT, order["id"])["status"]

    def payment(self, payment: dict) -> dict:
        return self.payments.get_payment(ACCOUNT, payment["id"])

    def method(self) -> dict:
        return next(m for m in self.payments.list_methods() if (m["asset"], m["network"]) == (self.asset, self.network))


@pytest.fixture
def shop(orders, payments, node) -> Shop:
    return Shop(orders, payments, node.network)
