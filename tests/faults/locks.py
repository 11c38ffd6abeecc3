"""Hold a service's writes at a chosen point: one of its tables locked, so that a transaction writing there waits
before its commit, for as long as the test keeps the lock."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import text

from kernodeck_kit.db import make_engine


@dataclass(frozen=True)
class Held:
    waiting: Callable[[], int]  # how many transactions wait to write into the table (a reader's wait not counted)
    release: Callable[[], None]  # let them go before the block ends


@contextmanager
def table_locked(url: str, table: str) -> Iterator[Held]:
    """Lock `table` of the database at `url` against writers until the block ends or `release()`."""
    engine = make_engine(url)
    try:
        with engine.connect() as holder, engine.connect() as observer:
            holder.execute(text(f"LOCK TABLE {table} IN EXCLUSIVE MODE"))

            def waiting() -> int:
                observer.rollback()  # a fresh snapshot of pg_stat_activity each time
                return observer.execute(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        " AND wait_event_type = 'Lock' AND query ILIKE :insert"
                    ),
                    {"insert": f"INSERT INTO {table} %"},
                ).scalar_one()

            yield Held(waiting, holder.rollback)
            holder.rollback()
    finally:
        engine.dispose()
