"""Column types shared by every service's tables, and the one clock and time format of every service."""

from datetime import UTC, datetime

from sqlalchemy import DateTime, Numeric, String
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator):
    """Aware UTC datetimes in and out, on SQLite (which keeps no zone) too."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect):
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utcnow() -> datetime:
    return datetime.now(UTC)


def rfc3339(at: datetime | None) -> str | None:
    """A moment as every service answers it: RFC 3339 in UTC with a Z (2026-01-01T12:00:00Z); None stays None."""
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z") if at is not None else None


class BaseUnits(TypeDecorator):
    """Crypto amounts in base units: exact integers beyond 64 bits (wei).

    NUMERIC(78, 0) on PostgreSQL (2**256 fits); decimal text on SQLite, whose
    numeric affinity would otherwise turn large integers into floats.
    """

    impl = String(80)
    cache_ok = True

    def load_dialect_impl(self, dialect):
        if dialect.name == "postgresql":
            return dialect.type_descriptor(Numeric(78, 0))
        return dialect.type_descriptor(String(80))

    def process_bind_param(self, value: int | None, dialect):
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"base units must be an int, not {type(value).__name__}")
        return value if dialect.name == "postgresql" else str(value)

    def process_result_value(self, value, dialect) -> int | None:
        return None if value is None else int(value)
