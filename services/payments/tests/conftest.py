"""Fixtures for the payments service: payments as a real container on the broker and PostgreSQL, next to a
double of the orders RPC it calls (tests/integration runs it with the real catalog and orders)."""

import json
from datetime import UTC, datetime
from uuid import uuid4

import pytest
from nameko.rpc import rpc
from nameko.standalone.rpc import ServiceRpcProxy
from sqlmodel import Session

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.rpc import OrderSummary
from kernodeck_kit.db import make_engine
from kernodeck_kit.doubles import ProvisioningDouble
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.ledger.store import assert_invariant
from kernodeck_payments.service import PaymentsService

# Account keys of the public "abandon ... about" test mnemonic: never for real money.
TEST_KEYS = {
    "bitcoin": "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs",
    "litecoin": "xpub6CjGURuDpczf6uNrCCwfhVizn5J3hsWcvZ2m6GAdmAjZnoWJPrx6TFPjGSftc2o5fvox6ubQjSXmjjaHZjwYMH7SGFpHHb9Jg24zBf66mbE",
    "ethereum": "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt",
    "tron": "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd",
}
RATES = {"BTC": "50000", "ETH": "2500", "USDT": "1", "USDC": "1", "TRX": "0.25", "SOL": "150", "LTC": "100"}


LOT_PRICES = {("h100", 3): 18_900, ("h100", 7): 42_000}  # cents per lot, as the catalog prices them


class OrdersDouble:
    """Orders' `get_order` as payments calls it: what `orders` holds (id -> order), or orders' not_found."""

    name = "orders"
    orders: dict = {}

    @rpc(expected_exceptions=ServiceError)
    def get_order(self, account_id, order_id) -> dict:
        order = self.orders.get(order_id)
        if order is None or order["account_id"] != account_id:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
        return order


@pytest.fixture(scope="session")
def databases(pg_database):
    return {"payments": pg_database("kernodeck_payments")}


@pytest.fixture
def rates_file(tmp_path):
    return tmp_path / "rates.json"


@pytest.fixture
def write_rates(rates_file):
    """`write_rates(rates, as_of)` replaces the operator's rates file (then call payments.refresh_rates)."""

    def write(rates: dict = RATES, as_of: datetime | None = None) -> None:
        rates_file.write_text(json.dumps({"as_of": (as_of or datetime.now(UTC)).isoformat(), "rates": rates}))

    write()
    return write


@pytest.fixture
def settings(rates_file, write_rates, databases) -> PaymentsSettings:
    return PaymentsSettings(
        database_url=databases["payments"],
        **{f"{network}_xpub": key for network, key in TEST_KEYS.items()},
        rate_sources="file",
        rate_file=rates_file,
        rate_refresh_s=3600,
        sweep_interval_s=3600,
    )


def check_ledger(database_url: str) -> None:
    engine = make_engine(database_url)
    with Session(engine) as session:
        assert_invariant(session)
    engine.dispose()


@pytest.fixture
def configs(rabbit_config, databases, settings):
    truncate_all(databases["payments"])
    yield {
        "orders": {**rabbit_config, "serializer": "json"},
        "provisioning": {**rabbit_config, "serializer": "json"},
        "payments": service_config(rabbit_config, databases["payments"], settings),
    }
    check_ledger(databases["payments"])


def start(container_factory, services: dict, configs: dict) -> dict:
    """Start each {name: service class} with its config; the containers by name."""
    containers = {name: container_factory(cls, configs[name]) for name, cls in services.items()}
    for container in containers.values():
        container.start()
    return containers


@pytest.fixture
def provisioning_double():
    """provisioning's hold RPCs (GPUs held per order); a test sets `free_gpus` to run short."""
    return ProvisioningDouble.reset()


@pytest.fixture
def running(container_factory, configs, provisioning_double):
    OrdersDouble.orders = {}
    doubles = {"orders": OrdersDouble, "provisioning": provisioning_double}
    return start(container_factory, {**doubles, "payments": PaymentsService}, configs)


@pytest.fixture
def payments(running, configs):
    with ServiceRpcProxy("payments", configs["payments"]) as proxy:
        yield proxy


@pytest.fixture
def orders(running) -> dict:
    """The orders the double answers with, by id: a test changes one's status as orders would."""
    return OrdersDouble.orders


# --- the helpers, as fixtures ------------------------------------------------------------------------


@pytest.fixture
def payments_ready(payments):
    """The payments proxy, once the eager rate refresh at start has stored the rates file's rates."""
    from services.payments.tests.helpers import wait_until

    wait_until(
        lambda: all(m["available"] for m in payments.list_methods() if m["network"] != "solana"), what="the rates"
    )
    return payments


@pytest.fixture
def watcher(configs):
    """Chain events with an increasing sequence; `send` waits until payments has handled each one."""
    from services.payments.tests.helpers import Chain

    return Chain(configs["payments"])


@pytest.fixture
def payments_events(configs):
    """Every event published on `payments.events` from now on (`of(type)`, `wait_for(type, n)`)."""
    from services.payments.tests.helpers import EventTap

    tap = EventTap(configs["payments"]["AMQP_URI"])
    yield tap
    tap.close()


@pytest.fixture
def payments_db(databases):
    from services.payments.tests.helpers import PaymentsDb

    db = PaymentsDb(databases["payments"])
    yield db
    db.close()


@pytest.fixture
def new_order(orders):
    """`new_order(account, model="h100", days=3, lots=1)` -> an order awaiting payment, as orders answers it."""

    def create(account_id: str, model: str = "h100", days: int = 3, lots: int = 1) -> dict:
        lot_price = LOT_PRICES[(model, days)]
        summary = OrderSummary(
            model=model,
            model_name=model.upper(),
            backend="cuda",
            duration_days=days,
            lots=lots,
            gpus_per_lot=1,
            total_gpus=lots,
            preparation="ubuntu",
            lot_price_usd_cents=lot_price,
            total_usd_cents=lot_price * lots,
        )
        order_id = uuid4().hex
        orders[order_id] = {
            "id": order_id,
            "account_id": account_id,
            "status": "awaiting_payment",
            "summary": summary.model_dump(),
        }
        return orders[order_id]

    return create
