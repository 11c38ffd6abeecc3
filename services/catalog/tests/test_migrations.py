"""The catalog migrations: an event applied before the kit derived consumer keys stays applied after them."""

from datetime import UTC, datetime

from alembic import command
from sqlalchemy import MetaData, Table, select

from kernodeck_contracts.events import CapacityChanged
from kernodeck_kit.db import make_engine
from kernodeck_kit.migrations import alembic_config
from kernodeck_kit.outbox import Store, consumer_key
from kernodeck_kit.testing import assert_schema_is_the_models

PACKAGE = "kernodeck_catalog"


def test_a_capacity_applied_under_the_old_key_is_not_applied_again(database_at):
    url = database_at(PACKAGE, "0003_processed_at_index")
    engine = make_engine(url)
    applied, other = CapacityChanged(model_id="h100", available_lots=1), "e-of-another-consumer"
    with engine.begin() as conn:
        processed = Table("processed_events", MetaData(), autoload_with=conn)
        at = datetime(2026, 12, 1, tzinfo=UTC)
        conn.execute(
            processed.insert(),
            [
                {"consumer": "capacity", "event_id": applied.event_id, "processed_at": at},
                {"consumer": "telegram-updates", "event_id": other, "processed_at": at},
            ],
        )

    command.upgrade(alembic_config(PACKAGE, url), "heads")

    with engine.begin() as conn:
        processed = Table("processed_events", MetaData(), autoload_with=conn)
        rows = set(conn.execute(select(processed.c.consumer, processed.c.event_id)))
    assert rows == {(consumer_key(CapacityChanged), applied.event_id), ("telegram-updates", other)}
    with Store(engine, "catalog", relay=None).consume(applied) as tx:
        assert tx is None  # redelivered across the deploy: applied once
    engine.dispose()
    assert_schema_is_the_models(PACKAGE, url)
