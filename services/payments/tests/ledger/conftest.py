"""Ledger tests run on PostgreSQL and on SQLite, and the books must balance after every one."""

from datetime import UTC, datetime

import eventlet
import pytest
from sqlmodel import Session, SQLModel

from kernodeck_contracts.errors import ServiceError
from kernodeck_kit.db import is_postgres, make_engine
from kernodeck_kit.testing import truncate_all
from kernodeck_payments.ledger.store import BalanceRow, LedgerEntryRow, assert_invariant

LEDGER_TABLES = [LedgerEntryRow.__table__, BalanceRow.__table__]
# Greenthreads racing at once, each on its own connection: half of
# PostgreSQL's default 100 connections.
WORKERS = 50
NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)  # when every entry of a test is booked


@pytest.fixture(scope="session")
def ledger_pg_url(pg_database):
    return pg_database(tables=LEDGER_TABLES)


@pytest.fixture(params=["postgresql", "sqlite"])
def engine(request, tmp_path):
    if request.param == "postgresql":
        url = request.getfixturevalue("ledger_pg_url")
        truncate_all(url)
        engine = make_engine(url, pool_size=WORKERS)
    else:
        engine = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
        SQLModel.metadata.create_all(engine, tables=LEDGER_TABLES)
    yield engine
    with Session(engine) as session:
        assert_invariant(session)
    engine.dispose()


@pytest.fixture
def in_tx(engine):
    """in_tx(fn, *args): `fn(session, *args)` in a transaction of its own, committed; returns its result."""

    def run(fn, *args):
        with Session(engine) as session:
            result = fn(session, *args)
            session.commit()
            return result

    return run


@pytest.fixture
def race(engine):
    """race(calls): each `(fn, *args)` as `fn(session, *args)` in its own greenthread and transaction.

    Returns what each call returned, or the code of the ServiceError it raised.
    On PostgreSQL the greenthreads interleave (the kit's wait callback yields on every
    query); on SQLite the kit's one-connection engine queues them.
    """
    if is_postgres(engine):
        # Open every connection first, so that the race starts on the queries
        # rather than on how fast each worker's connection happens to open.
        for connection in list(eventlet.GreenPool(WORKERS).imap(lambda _: engine.connect(), range(WORKERS))):
            connection.close()

    def one(fn, *args):
        with Session(engine) as session:
            try:
                result = fn(session, *args)
            except ServiceError as error:
                return error.code
            session.commit()
            return result

    def run(calls):
        return list(eventlet.GreenPool(WORKERS).starmap(one, calls))

    return run
