"""The payments service's tables and queries (ledger and rates keep their own)."""

from sqlmodel import Session, SQLModel

from kernodeck_kit.db import is_postgres
from kernodeck_kit.rows import values_of


def one_or_none(session: Session, query, lock: bool):
    """The one row `query` selects, or None; with `lock`, locked for update on PostgreSQL.

    SQLite needs no row lock: the kit begins every transaction there with BEGIN IMMEDIATE.
    """
    if lock and is_postgres(session.get_bind()):
        query = query.with_for_update()
    return session.execute(query).scalar_one_or_none()


def all_rows(session: Session, query, lock: bool) -> list:
    """The rows `query` selects; with `lock`, locked for update on PostgreSQL (in the query's order)."""
    if lock and is_postgres(session.get_bind()):
        query = query.with_for_update()
    return list(session.execute(query).scalars())


def write_onto(row: SQLModel, value) -> None:
    """Set the row's columns to the domain value's fields, those that differ only (SQLAlchemy updates what
    changed)."""
    for name, new in values_of(value, type(value)).items():
        if getattr(row, name) != new:
            setattr(row, name, new)
