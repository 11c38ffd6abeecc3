"""Engines for the embedded default (SQLite) and PostgreSQL."""

from sqlalchemy import event, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.pool import QueuePool
from sqlmodel import create_engine


def normalize_url(url: str) -> str:
    """Plain postgresql:// means psycopg2 here (SQLAlchemy 2.1 would pick psycopg 3)."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg2://" + url[len(prefix) :]
    return url


def make_engine(url: str, pool_size: int = 10) -> Engine:
    url = normalize_url(url)
    if url.startswith("sqlite"):
        return _sqlite_engine(url)
    return create_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        hide_parameters=True,
        # A flush that updates many rows (a block's transfers, its intents) sends them in pages, not one round
        # trip each; inserts go many to a statement already.
        executemany_mode="values_plus_batch",
        executemany_batch_page_size=500,
    )


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def insert_for(session, table):
    """INSERT for whichever database `session` is on, so that ON CONFLICT clauses can follow."""
    dialect = postgresql if is_postgres(session.get_bind()) else sqlite
    return dialect.insert(table)


def _sqlite_engine(url: str) -> Engine:
    # One connection: under eventlet, SQLite's own busy-wait would block the
    # whole process, so greenthreads queue for the connection instead.
    engine = create_engine(
        url,
        poolclass=QueuePool,
        pool_size=1,
        max_overflow=0,
        pool_timeout=30,
        connect_args={"check_same_thread": False, "timeout": 30},
        # Bound values (password hashes, tokens) never reach a log through an error.
        hide_parameters=True,
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record):
        dbapi_conn.isolation_level = None  # let SQLAlchemy emit BEGIN itself
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def lock_key(session, namespace: int, key: str) -> None:
    """Hold a lock on `key` (within `namespace`) until the session's transaction ends: two transactions locking
    the same key run one after the other. A PostgreSQL advisory lock; SQLite's transactions take the whole
    database already."""
    if is_postgres(session.get_bind()):
        session.execute(
            text("SELECT pg_advisory_xact_lock(:namespace, hashtext(:key))"), {"namespace": namespace, "key": key}
        )
