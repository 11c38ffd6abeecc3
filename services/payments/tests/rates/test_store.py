from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, SQLModel, select

from kernodeck_kit.db import make_engine
from kernodeck_kit.testing import truncate_all
from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.rates.store import ExchangeRate, observations, save_observations

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def pg_url(pg_database):
    return pg_database(tables=[ExchangeRate.__table__])


# SQLite is the embedded default of `make run`; the upsert must hold there too.
@pytest.fixture(params=["postgresql", "sqlite"])
def engine(request, tmp_path):
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_url")
        truncate_all(url)
    else:
        url = f"sqlite:///{tmp_path / 'rates.db'}"
    engine = make_engine(url)
    SQLModel.metadata.create_all(engine, tables=[ExchangeRate.__table__])
    yield engine
    engine.dispose()


def save(engine, *rates: Rate) -> None:
    with Session(engine) as session:
        save_observations(session, list(rates))
        session.commit()


def stored(engine) -> dict[tuple[str, str], tuple[str, datetime]]:
    with Session(engine) as session:
        return {(r.symbol, r.source): (r.usd, r.as_of) for r in session.exec(select(ExchangeRate)).all()}


def test_a_newer_observation_replaces_the_stored_one(engine):
    save(engine, Rate("BTC", "64000", "kraken", T0))
    save(engine, Rate("BTC", "64100.5", "kraken", T0 + timedelta(seconds=30)))
    assert stored(engine) == {("BTC", "kraken"): ("64100.5", T0 + timedelta(seconds=30))}


def test_an_older_observation_never_overwrites_a_newer_one(engine):
    save(engine, Rate("BTC", "64100", "kraken", T0 + timedelta(seconds=30)))
    save(engine, Rate("BTC", "63000", "kraken", T0))
    assert stored(engine) == {("BTC", "kraken"): ("64100", T0 + timedelta(seconds=30))}


def test_the_same_time_again_takes_the_latest_answer(engine):
    save(engine, Rate("BTC", "64000", "file", T0))
    save(engine, Rate("BTC", "64001", "file", T0))
    assert stored(engine) == {("BTC", "file"): ("64001", T0)}


def test_a_batch_keeps_the_newest_of_each_symbol_and_source(engine):
    save(
        engine,
        Rate("BTC", "64100", "kraken", T0 + timedelta(seconds=1)),
        Rate("BTC", "63000", "kraken", T0),
        Rate("BTC", "64050", "coingecko", T0),
        Rate("ETH", "3200", "kraken", T0),
    )
    assert stored(engine) == {
        ("BTC", "kraken"): ("64100", T0 + timedelta(seconds=1)),
        ("BTC", "coingecko"): ("64050", T0),
        ("ETH", "kraken"): ("3200", T0),
    }


def test_saving_nothing_is_fine(engine):
    save(engine)
    assert stored(engine) == {}


def test_observations_come_in_the_given_source_order_and_only_from_those_sources(engine):
    save(
        engine,
        Rate("BTC", "64000", "kraken", T0),
        Rate("BTC", "64050", "coingecko", T0),
        Rate("BTC", "64070", "coinbase", T0),
        Rate("ETH", "3200.123456789012345678", "kraken", T0),
    )
    with Session(engine) as session:
        found = observations(session, ["BTC", "ETH", "SOL"], ["coingecko", "kraken"])
    assert {symbol: [(r.source, r.usd) for r in rates] for symbol, rates in found.items()} == {
        "BTC": [("coingecko", "64050"), ("kraken", "64000")],
        "ETH": [("kraken", "3200.123456789012345678")],
        "SOL": [],
    }
    assert found["BTC"][0] == Rate("BTC", "64050", "coingecko", T0)
    assert found["BTC"][0].as_of.tzinfo is not None
