"""Alembic, driven from code: each service keeps `<package>/migrations`, and the kit the revisions of its own
tables (outbox, processed_events) in `kernodeck_kit/migrations/versions`, a branch (`kit`) that every service's
first revision depends on: a change to those tables is one revision there, for every service's database.
Its head is one of its own beside the service's: a database goes to `heads` (alembic's `head` names one)."""

import zlib

from alembic import command, context
from alembic.config import Config
from sqlalchemy import MetaData, text
from sqlalchemy.engine import Engine

from kernodeck_kit.db import is_postgres, make_engine

KIT_VERSIONS = "kernodeck_kit:migrations/versions"


def upgrade(package: str, url: str) -> None:
    """Bring the database at `url` to the newest revisions of `package` and of the kit.

    On PostgreSQL an advisory lock keeps replicas starting together from
    migrating twice.
    """
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            if is_postgres(engine):
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": zlib.crc32(package.encode())})
            config = alembic_config(package, url)
            config.attributes["connection"] = conn
            command.upgrade(config, "heads")
    finally:
        engine.dispose()


def alembic_config(package: str, url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", f"{package}:migrations")
    config.set_main_option("path_separator", "space")
    config.set_main_option("version_locations", f"{package}:migrations/versions {KIT_VERSIONS}")
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def run_env(metadata: MetaData) -> None:
    """Body of every service's migrations/env.py."""
    config = context.config
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection, metadata)
        return
    engine: Engine = make_engine(config.get_main_option("sqlalchemy.url"))
    with engine.begin() as conn:
        _run(conn, metadata)
    engine.dispose()


def _run(connection, metadata: MetaData) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
