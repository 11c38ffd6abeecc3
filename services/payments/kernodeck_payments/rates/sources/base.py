"""What every rate source is, and the one error it may raise."""

import json
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Protocol

from kernodeck_payments.rates.domain import Rate, parse_usd


class RateSourceError(Exception):
    """A source gave no usable answer: unreachable, refused, or said something unexpected."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status  # the HTTP status, when the source answered with one


class RateSource(Protocol):
    name: str

    def fetch(self, symbols: Sequence[str]) -> list[Rate]:
        """Current rates of those `symbols` the source knows; a symbol it does not price is left out.

        Raises RateSourceError on any failure.
        """
        ...


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number")


def loads_exact(body: bytes, what: str) -> Any:
    """JSON whose numbers come back as Decimal, read from their text, never as float."""
    try:
        return json.loads(body, parse_float=Decimal, parse_int=Decimal, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise RateSourceError(f"{what}: not valid JSON ({exc})") from None


def price(value: Any, kind: type[str] | type[Decimal], what: str) -> str:
    """The canonical USD string of a price read from a source, or RateSourceError.

    `kind` is how the source writes prices: as text, or as JSON numbers.
    """
    if not isinstance(value, kind):
        raise RateSourceError(f"{what}: a price must be a {kind.__name__}, not {type(value).__name__}")
    try:
        return parse_usd(value)
    except ValueError as exc:
        raise RateSourceError(f"{what}: {exc}") from None
