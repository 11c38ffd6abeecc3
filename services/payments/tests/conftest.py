"""Fixtures for the payments service: catalog, orders and payments as real containers on the broker and PostgreSQL."""

import itertools
import json
from datetime import UTC, datetime

import pytest
from nameko.standalone.events import event_dispatcher
from nameko.standalone.rpc import ServiceRpcProxy
from sqlmodel import Session

from kernodeck_catalog.config import DEFAULT_CATALOG, load_catalog_file
from kernodeck_catalog.service import CatalogService
from kernodeck_catalog.store import seed
from kernodeck_kit.db import make_engine
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_orders.service import OrdersService
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


@pytest.fixture(scope="session")
def databases(pg_database):
    return {name: pg_database(f"kernodeck_{name}") for name in ("catalog", "orders", "payments")}


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


@pytest.fixture
def configs(rabbit_config, databases, settings):
    for url in databases.values():
        truncate_all(url)
    seed(databases["catalog"], load_catalog_file(DEFAULT_CATALOG))
    CatalogService._cache = None
    yield {
        "catalog": service_config(rabbit_config, databases["catalog"]),
        "orders": {
            **service_config(rabbit_config, databases["orders"]),
            "UNPAID_TTL_MINUTES": 1440,
            "SWEEP_INTERVAL_S": 3600,
        },
        "payments": {
            **service_config(rabbit_config, databases["payments"]),
            **settings.nameko_config(),
            "AMQP_URI": rabbit_config["AMQP_URI"],
        },
    }
    engine = make_engine(databases["payments"])
    with Session(engine) as session:
        assert_invariant(session)
    engine.dispose()


@pytest.fixture
def running(container_factory, configs):
    containers = {}
    for name, cls in (("catalog", CatalogService), ("orders", OrdersService), ("payments", PaymentsService)):
        containers[name] = container_factory(cls, configs[name])
        containers[name].start()
    return containers


@pytest.fixture
def payments(running, configs):
    with ServiceRpcProxy("payments", configs["payments"]) as proxy:
        yield proxy


@pytest.fixture
def orders(running, configs):
    with ServiceRpcProxy("orders", configs["orders"]) as proxy:
        yield proxy


@pytest.fixture
def chain(configs):
    """`chain(EventClass, **fields)` publishes a watcher event with the next sequence number."""
    dispatch = event_dispatcher(configs["payments"])
    sequence = itertools.count(1)

    def emit(event_class, **fields):
        event = event_class(sequence=next(sequence), **fields)
        dispatch(event.source, event.type, event.to_message())
        return event

    return emit


# --- Added for the integration tests (test_reconciliation_flow, test_intents, test_balance, test_reviews, ...) ---


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
    """`new_order(account, model="h100", days=3, lots=1)` -> the order as orders.create_order returns it."""

    def create(account_id: str, model: str = "h100", days: int = 3, lots: int = 1) -> dict:
        return orders.create_order(account_id, model, days, lots, "ubuntu")

    return create
