"""Alembic, driven from code: each service keeps `<package>/migrations`."""

import zlib

from alembic import command, context
from alembic.config import Config
from sqlalchemy import MetaData, text
from sqlalchemy.engine import Engine

from kernodeck_kit.db import is_postgres, make_engine


def upgrade(package: str, url: str) -> None:
    """Bring the database at `url` to the newest revision of `package`.

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
            command.upgrade(config, "head")
    finally:
        engine.dispose()


def alembic_config(package: str, url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", f"{package}:migrations")
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
