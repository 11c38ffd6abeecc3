"""Column types on both databases, and the time format."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, insert, select

from kernodeck_kit.db import make_engine
from kernodeck_kit.types import BaseUnits, UtcDateTime, rfc3339

WEI = 123 * 10**24 + 7  # beyond 64 bits and beyond a double's precision


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, pg_database, tmp_path):
    url = f"sqlite:///{tmp_path / 't.db'}" if request.param == "sqlite" else pg_database()
    engine = make_engine(url)
    yield engine
    engine.dispose()


def test_base_units_and_utc_times_come_back_exact(engine):
    table = Table(
        "t", MetaData(), Column("id", Integer, primary_key=True), Column("a", BaseUnits()), Column("at", UtcDateTime())
    )
    table.metadata.create_all(engine)
    at = datetime(2026, 11, 29, 12, 30, tzinfo=UTC)
    with engine.begin() as conn:
        conn.execute(insert(table), [{"id": 1, "a": WEI, "at": at}, {"id": 2, "a": 0, "at": None}])
        rows = conn.execute(select(table.c.a, table.c.at).order_by(table.c.id)).all()
    assert rows == [(WEI, at), (0, None)]
    assert type(rows[0][0]) is int


@pytest.mark.parametrize("value", [1.5, True, "12"])
def test_base_units_refuse_anything_but_int(engine, value):
    table = Table("u", MetaData(), Column("a", BaseUnits()))
    table.metadata.create_all(engine)
    with pytest.raises(Exception, match="base units must be an int"), engine.begin() as conn:
        conn.execute(insert(table), [{"a": value}])


def test_naive_datetimes_are_refused(engine):
    table = Table("v", MetaData(), Column("at", UtcDateTime()))
    table.metadata.create_all(engine)
    with pytest.raises(Exception, match="naive datetime"), engine.begin() as conn:
        conn.execute(insert(table), [{"at": datetime(2026, 1, 1)}])


def test_every_service_writes_a_moment_in_utc_with_a_z():
    paris = timezone(timedelta(hours=1))
    assert rfc3339(datetime(2026, 1, 1, 13, 30, tzinfo=paris)) == "2026-01-01T12:30:00Z"
    assert rfc3339(datetime(2026, 1, 1, 12, 0, 0, 250_000, tzinfo=UTC)) == "2026-01-01T12:00:00.250000Z"
    assert rfc3339(None) is None
