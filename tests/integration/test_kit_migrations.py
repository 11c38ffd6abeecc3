"""The kit's tables (outbox, processed_events) on the kit's own Alembic branch, which every service's first
revision depends on: a service's database made before, at the last revision of its own that it had then,
upgrades to the heads with its rows kept and the models' schema, on PostgreSQL and SQLite."""

import subprocess
import sys
from datetime import UTC, datetime

import pytest
from sqlalchemy import MetaData, Table, select, text

from kernodeck_kit.db import make_engine
from kernodeck_kit.testing import assert_schema_is_the_models

# Each service's head when the kit came to own its tables.
BEFORE_THE_KIT = {
    "kernodeck_accounts": "0005_networks_and_known_clients",
    "kernodeck_catalog": "0005_capacity_consumer_key",
    "kernodeck_watchers": "0004_watch_match_key",
    "kernodeck_notify": "0002_processed_at_index",
    "kernodeck_orders": "0005_timeline_codes",
    "kernodeck_payments": "0011_retire_solana_addresses",
    "kernodeck_provisioning": "0004_published_held_lots",
    "kernodeck_support": "0003_subjects_and_answer_codes",
}
# In a process of its own: notify's models and orders' share table names, so one process cannot load both.
MIGRATE = (
    "import sys; from alembic import command; from kernodeck_kit.migrations import alembic_config; "
    "command.upgrade(alembic_config(sys.argv[1], sys.argv[2]), sys.argv[3])"
)
UPGRADE = "import sys; from kernodeck_kit.migrations import upgrade; upgrade(sys.argv[1], sys.argv[2])"
AT = datetime(2026, 12, 1, tzinfo=UTC)
OUTBOX = {"event_id": "e-1", "source": "orders", "event_type": "order_created", "payload": "{}", "attempts": 2}
PROCESSED = {"consumer": "payments.payment_settled", "event_id": "e-2"}


@pytest.fixture(params=["postgresql", "sqlite"])
def empty_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'service.db'}"
    url = request.getfixturevalue("pg_database")()
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE outbox, processed_events"))  # the kit's, made from the models: migrated below
    engine.dispose()
    return url


def rows(url: str) -> tuple[list, list, set]:
    engine = make_engine(url)
    with engine.connect() as conn:
        outbox = Table("outbox", MetaData(), autoload_with=conn)
        processed = Table("processed_events", MetaData(), autoload_with=conn)
        found = (
            [dict(row) for row in conn.execute(select(outbox)).mappings()],
            [dict(row) for row in conn.execute(select(processed)).mappings()],
            set(conn.execute(text("SELECT version_num FROM alembic_version")).scalars()),
        )
    engine.dispose()
    return found


@pytest.mark.parametrize("package", BEFORE_THE_KIT)
def test_a_database_from_before_the_kit_owned_its_tables_upgrades_with_its_rows(empty_url, package):
    subprocess.run([sys.executable, "-c", MIGRATE, package, empty_url, BEFORE_THE_KIT[package]], check=True)
    engine = make_engine(empty_url)
    with engine.begin() as conn:
        conn.execute(Table("outbox", MetaData(), autoload_with=conn).insert(), {**OUTBOX, "created_at": AT})
        conn.execute(
            Table("processed_events", MetaData(), autoload_with=conn).insert(), {**PROCESSED, "processed_at": AT}
        )
    engine.dispose()
    outbox, processed, versions = rows(empty_url)
    assert versions == {BEFORE_THE_KIT[package]}  # the kit's revision counted as applied: it depends on it

    subprocess.run([sys.executable, "-c", UPGRADE, package, empty_url], check=True)

    assert rows(empty_url) == (outbox, processed, versions)
    assert [row["event_id"] for row in outbox] == ["e-1"] and processed[0]["consumer"] == PROCESSED["consumer"]
    assert_schema_is_the_models(package, empty_url)
