"""The latest observation of each source for each symbol."""

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Text, bindparam
from sqlmodel import Column, Field, Session, SQLModel, select

from kernodeck_kit.db import insert_for
from kernodeck_kit.types import UtcDateTime, utcnow
from kernodeck_payments.rates.domain import Rate


class ExchangeRate(SQLModel, table=True):
    __tablename__ = "exchange_rates"

    symbol: str = Field(primary_key=True, max_length=8)
    source: str = Field(primary_key=True, max_length=32)
    usd: str = Field(sa_type=Text)  # canonical decimal string, USD per one whole unit
    as_of: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    fetched_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


def save_observations(session: Session, rates: Sequence[Rate]) -> None:
    """Upsert each (symbol, source); an observation older than the stored one is dropped."""
    newest: dict[tuple[str, str], Rate] = {}
    for rate in rates:
        kept = newest.get((rate.symbol, rate.source))
        if kept is None or rate.as_of > kept.as_of:
            newest[(rate.symbol, rate.source)] = rate
    if not newest:
        return
    fetched_at = utcnow()
    statement = insert_for(session, ExchangeRate).values(
        [
            {"symbol": r.symbol, "source": r.source, "usd": r.usd, "as_of": r.as_of, "fetched_at": fetched_at}
            for r in newest.values()
        ]
    )
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["symbol", "source"],
            set_={name: statement.excluded[name] for name in ("usd", "as_of", "fetched_at")},
            where=ExchangeRate.as_of <= statement.excluded.as_of,
        )
    )


# Built once, as every payment's instructions read it.
_OBSERVATIONS = select(ExchangeRate).where(
    ExchangeRate.symbol.in_(bindparam("symbols", expanding=True)),
    ExchangeRate.source.in_(bindparam("sources", expanding=True)),
)


def observations(session: Session, symbols: Sequence[str], sources: Sequence[str]) -> dict[str, list[Rate]]:
    """Every symbol's stored rates from `sources`, in that (priority) order.

    A source missing from `sources` (switched off by the operator) is not read.
    """
    rows = session.exec(_OBSERVATIONS, params={"symbols": list(symbols), "sources": list(sources)}).all()
    stored = {(row.symbol, row.source): Rate(row.symbol, row.usd, row.source, row.as_of) for row in rows}
    return {
        symbol: [stored[(symbol, source)] for source in sources if (symbol, source) in stored] for symbol in symbols
    }
