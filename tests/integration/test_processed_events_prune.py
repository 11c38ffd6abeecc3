"""Every service's processed_events, migrated to its head: the hourly prune (Store.prune_processed) removes
what is past the retention, keeps the rest, and finds the old rows by the processed_at index."""

import subprocess
import sys
from datetime import timedelta

import pytest
from sqlalchemy import text

from kernodeck_contracts.events import CapacityChanged
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.types import utcnow

PACKAGES = (
    "kernodeck_accounts",
    "kernodeck_catalog",
    "kernodeck_watchers",
    "kernodeck_notify",
    "kernodeck_orders",
    "kernodeck_payments",
    "kernodeck_provisioning",
    "kernodeck_support",
)
PRUNE = "DELETE FROM processed_events WHERE processed_at < :before"
UPGRADE = "import sys; from kernodeck_kit.migrations import upgrade; upgrade(sys.argv[1], sys.argv[2])"


def migrated(pg_database, package: str) -> str:
    """The URL of a database at `package`'s head, migrated in a process of its own: notify's models and
    orders' share table names, so one process cannot load both."""
    url = pg_database()
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP TABLE outbox, processed_events"))  # the kit's, made from the models: migrated below
    engine.dispose()
    subprocess.run([sys.executable, "-c", UPGRADE, package, url], check=True)
    return url


def changed() -> CapacityChanged:
    return CapacityChanged(model_id="h100", available_lots=1)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_prune_removes_only_rows_past_the_retention_by_the_index(pg_database, package):
    engine = make_engine(migrated(pg_database, package))
    store = Store(engine, "consumer", relay=None)
    old, recent = changed(), changed()
    for event in (old, recent):
        with store.consume(event) as tx:
            assert tx is not None
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE processed_events SET processed_at = :at WHERE event_id = :id"),
            {"at": utcnow() - timedelta(days=31), "id": old.event_id},
        )
        conn.execute(text("SET LOCAL enable_seqscan = off"))  # a table of two rows is read whole otherwise
        plan = "\n".join(conn.execute(text(f"EXPLAIN {PRUNE}"), {"before": utcnow()}).scalars())
    assert "ix_processed_events_processed_at" in plan, plan
    assert store.prune_processed(utcnow() - timedelta(days=30)) == 1
    with engine.connect() as conn:
        assert conn.execute(text("SELECT event_id FROM processed_events")).scalars().all() == [recent.event_id]
    with store.consume(recent) as tx:
        assert tx is None  # still remembered: a redelivery changes nothing
    engine.dispose()
