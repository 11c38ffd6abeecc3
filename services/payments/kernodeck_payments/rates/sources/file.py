"""The operator's rates file, for running offline.

    {"as_of": "2025-01-31T12:00:00Z", "rates": {"BTC": "64000.00", "USDT": "1"}}

Its rates are as old as the file says: a file left unchanged goes stale
like any other source, and then there is no rate.
"""

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from kernodeck_payments.rates.domain import SYMBOLS, Rate
from kernodeck_payments.rates.sources.base import RateSourceError, loads_exact, price


class FileRateSource:
    name = "file"

    def __init__(self, path: Path):
        self.path = path

    def fetch(self, symbols: Sequence[str]) -> list[Rate]:
        what = f"rates file {self.path}"
        try:
            body = loads_exact(self.path.read_bytes(), what)
        except OSError as exc:
            raise RateSourceError(f"{what}: {exc.strerror or exc}") from None
        if not isinstance(body, dict) or not isinstance(body.get("rates"), dict):
            raise RateSourceError(f'{what}: needs "as_of" and a "rates" object')
        as_of = _declared_time(body.get("as_of"), what)
        unknown = sorted(set(body["rates"]) - set(SYMBOLS))
        if unknown:
            raise RateSourceError(f"{what}: unknown symbols {', '.join(unknown)}")
        return [
            Rate(symbol, price(body["rates"][symbol], str, f"{what} {symbol}"), self.name, as_of)
            for symbol in symbols
            if symbol in body["rates"]
        ]


def _declared_time(value, what: str) -> datetime:
    try:
        as_of = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        as_of = None
    if as_of is None or as_of.tzinfo is None:
        raise RateSourceError(f'{what}: "as_of" must be an RFC 3339 time with its offset, not {value!r}')
    return as_of
