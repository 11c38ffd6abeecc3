"""The pytest plugin's test databases."""

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, inspect

from kernodeck_kit.db import make_engine

WIDGETS = Table("widgets", MetaData(), Column("id", Integer, primary_key=True))


def test_a_database_of_a_few_tables_holds_them_and_the_kits_own(pg_database):
    engine = make_engine(pg_database(tables=[WIDGETS]))
    try:
        assert sorted(inspect(engine).get_table_names()) == ["outbox", "processed_events", "widgets"]
    finally:
        engine.dispose()


def test_a_migrated_database_takes_no_extra_tables(pg_database):
    with pytest.raises(ValueError, match="migrations"):
        pg_database("kernodeck_example", tables=[WIDGETS])
