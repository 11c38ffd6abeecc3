"""The provisioning migrations: a database made at an older revision reaches the models' schema, its rows kept."""

from datetime import UTC, datetime

from alembic import command
from sqlalchemy import MetaData, Table, select

from kernodeck_kit.db import make_engine
from kernodeck_kit.migrations import alembic_config
from kernodeck_kit.testing import assert_schema_is_the_models
from services.provisioning.tests.keys import HOST_KEY

PACKAGE = "kernodeck_provisioning"


def test_nodes_registered_before_isolation_was_checked_are_unchecked_and_rentals_have_no_leftover(database_at):
    url = database_at(PACKAGE, "0002_processed_at_index")
    engine = make_engine(url)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        nodes = Table("nodes", MetaData(), autoload_with=conn)
        rentals = Table("rentals", MetaData(), autoload_with=conn)
        conn.execute(
            nodes.insert(),
            {"id": "n1", "host": "10.0.0.1", "port": 22, "host_key": HOST_KEY, "model_id": "h100", "backend": "cuda",
             "gpu_count": 8, "state": "available", "note": "", "created_at": now},
        )  # fmt: skip
        conn.execute(
            rentals.insert(),
            {"order_id": "o1", "account_id": "a1", "model_id": "h100", "gpus": 1, "status": "ready", "node_id": "n1",
             "gpu_indices": "[0]", "payments_in_flight": "[]", "tried_nodes": "[]", "unix_user": "kdo1",
             "extra_days": 0, "extensions": "[]", "warned_hours": "[]", "access_secret": "", "reason": ""},
        )  # fmt: skip

    command.upgrade(alembic_config(PACKAGE, url), "heads")

    with engine.begin() as conn:
        nodes = Table("nodes", MetaData(), autoload_with=conn)
        rentals = Table("rentals", MetaData(), autoload_with=conn)
        node = conn.execute(select(nodes.c.isolation, nodes.c.isolation_note, nodes.c.isolation_checked_at)).one()
        assert tuple(node) == ("unchecked", "", None)  # one rental at a time until the sweep checks it
        assert conn.execute(select(rentals.c.leftover_nodes)).scalar() == "[]"
    engine.dispose()
    assert_schema_is_the_models(PACKAGE, url)
