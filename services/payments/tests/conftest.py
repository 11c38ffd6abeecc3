"""Fixtures for the payments service: payments as a real container on the broker and PostgreSQL; its
neighbours are the events they publish (orders' order_created and order_status_changed, the watchers'
chain events), built from libs/contracts. tests/integration runs it with the real catalog and orders."""

import json
from datetime import UTC, datetime, timedelta
from uuid import uuid4

import pytest
from sqlmodel import Session

from kernodeck_contracts.events import OrderCreated, OrderStatusChanged
from kernodeck_kit.db import make_engine
from kernodeck_kit.doubles import OrdersDouble, ProvisioningDouble
from kernodeck_kit.operators import CommandRpcProxy
from kernodeck_kit.testing import service_config, tap_events, truncate_all, wait_until
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
UNPAID_TTL = timedelta(hours=24)


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
def changed_settings() -> dict:
    """Settings a test module changes (override this fixture there), e.g. {"open_intents_per_order": 8}."""
    return {}


@pytest.fixture
def settings(rates_file, write_rates, databases, changed_settings) -> PaymentsSettings:
    return PaymentsSettings(
        database_url=databases["payments"],
        **{
            **{f"{network}_xpub": key for network, key in TEST_KEYS.items()},
            "rate_sources": "file",
            "rate_file": rates_file,
            "rate_min_sources": 1,  # the test's rates file alone
            "rate_refresh_s": 3600,
            "sweep_interval_s": 3600,
            **changed_settings,
        },
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
        "provisioning": {**rabbit_config, "serializer": "json"},
        "orders": {**rabbit_config, "serializer": "json"},
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
    services = {"provisioning": provisioning_double, "orders": OrdersDouble.reset(), "payments": PaymentsService}
    return start(container_factory, services, configs)


@pytest.fixture
def payments(running, configs):
    with CommandRpcProxy(configs["payments"], "cli:tests") as cluster:  # operator RPCs among them: as the command
        yield cluster.payments


class Orders:
    """Orders' side of the bus: its order_created and order_status_changed, each waited for until handled."""

    def __init__(self, chain):
        self.chain = chain

    def created(
        self,
        account_id: str,
        model: str = "h100",
        days: int = 3,
        lots: int = 1,
        lapses_in: timedelta = UNPAID_TTL,
        ssh_public_key: str | None = None,
    ) -> dict:
        total = LOT_PRICES[(model, days)] * lots
        now = datetime.now(UTC)
        event = OrderCreated(
            order_id=uuid4().hex,
            account_id=account_id,
            model_id=model,
            duration_days=days,
            lots=lots,
            total_gpus=lots,
            preparation="ubuntu",
            total_usd_cents=total,
            expires_at=now + lapses_in,
            ssh_public_key=ssh_public_key,
            occurred_at=now,
        )
        self.chain.deliver(event)
        return {
            "id": event.order_id,
            "account_id": account_id,
            "summary": {"total_usd_cents": total},
            "expires_at": event.expires_at,
        }

    def moved(self, order: dict, status: str) -> None:
        event = OrderStatusChanged(
            order_id=order["id"], account_id=order["account_id"], status=status, previous_status="awaiting_payment"
        )
        self.chain.deliver(event)


@pytest.fixture
def orders(running, watcher) -> Orders:
    return Orders(watcher)


# --- the helpers, as fixtures ------------------------------------------------------------------------


@pytest.fixture
def payments_ready(payments, watcher):
    """The payments proxy, once every network's watcher has reported (up to date) and the eager rate refresh at
    start has stored the rates file's rates."""
    from services.payments.tests.helpers import report_watchers

    report_watchers(watcher)
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
    with tap_events(configs["payments"]["AMQP_URI"], "payments") as tap:
        yield tap


@pytest.fixture
def payments_db(databases):
    from services.payments.tests.helpers import PaymentsDb

    db = PaymentsDb(databases["payments"])
    yield db
    db.close()


@pytest.fixture
def new_order(orders):
    """`new_order(account, model="h100", days=3, lots=1)` -> an order awaiting payment, announced as orders does."""
    return orders.created
