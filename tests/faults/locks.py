"""Hold a service's writes at a chosen point: its outbox table locked, so that a transaction writing an event
waits before its commit, for as long as the test keeps the lock."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from sqlalchemy import text

from kernodeck_kit.db import make_engine


@contextmanager
def outbox_locked(url: str) -> Iterator[Callable[[], int]]:
    """Lock the outbox of the database at `url`; yields `waiting()`: how many transactions wait to write an event
    there (the relay's own wait, a SELECT, is not counted)."""
    engine = make_engine(url)
    try:
        with engine.connect() as holder, engine.connect() as observer:
            holder.execute(text("LOCK TABLE outbox IN EXCLUSIVE MODE"))

            def waiting() -> int:
                observer.rollback()  # a fresh snapshot of pg_stat_activity each time
                return observer.execute(
                    text(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        " AND wait_event_type = 'Lock' AND query ILIKE 'INSERT INTO outbox%'"
                    )
                ).scalar_one()

            yield waiting
            holder.rollback()
    finally:
        engine.dispose()
