"""Which replica scans: the one holding the network's PostgreSQL advisory lock.

The lock lives on a connection of its own, so it goes the moment that
replica dies (its connection closes). On SQLite there is one process, and
it always scans.
"""

import logging
import zlib

from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection
from sqlalchemy.pool import NullPool

from kernodeck_kit.db import normalize_url

log = logging.getLogger(__name__)


class AdvisoryLock:
    def __init__(self, database_url: str, name: str):
        self.engine = create_engine(normalize_url(database_url), poolclass=NullPool, hide_parameters=True)
        self.key = zlib.crc32(name.encode())
        self.connection: Connection | None = None

    @property
    def held(self) -> bool:
        return self.connection is not None

    def hold(self) -> bool:
        """True while this replica holds the lock: take it if free, or check the connection that holds it."""
        if self.connection is not None:
            try:
                self.connection.execute(text("SELECT 1"))
                return True
            except Exception:
                log.warning("the connection holding the scan lock failed", exc_info=True)
                self.release()
        connection = None
        try:
            connection = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            if connection.execute(text("SELECT pg_try_advisory_lock(:key)"), {"key": self.key}).scalar():
                self.connection = connection
                return True
        except Exception:
            log.warning("cannot reach the database for the scan lock", exc_info=True)
        if connection is not None:
            connection.close()
        return False

    def release(self) -> None:
        if self.connection is not None:
            connection, self.connection = self.connection, None
            try:
                connection.close()
            except Exception:
                log.debug("closing the scan lock connection failed", exc_info=True)

    def close(self) -> None:
        self.release()
        self.engine.dispose()


class SoleProcess:
    """SQLite: a single process, always the active one."""

    held = True

    def hold(self) -> bool:
        return True

    def release(self) -> None:
        pass

    def close(self) -> None:
        pass


def leadership(database_url: str, network: str) -> AdvisoryLock | SoleProcess:
    if normalize_url(database_url).startswith("postgresql"):
        return AdvisoryLock(database_url, f"kernodeck-watcher:{network}")
    return SoleProcess()
