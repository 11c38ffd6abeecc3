"""Rates and the rule that picks one. No I/O.

A rate is USD per ONE whole unit, kept as the source's decimal text and
used as an exact `Fraction`: a float never touches money.
"""

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Context, Decimal, InvalidOperation
from enum import StrEnum
from fractions import Fraction

SYMBOLS = ("BTC", "ETH", "USDT", "USDC", "TRX", "SOL", "LTC")
STABLE_SYMBOLS = frozenset({"USDT", "USDC"})
PEG = "1"

# Plain ASCII decimal text: Decimal() alone would also take "NaN", " 5 ",
# "1_000" and non-ASCII digits.
_DECIMAL_TEXT = re.compile(r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")
# Any real price lies far inside these; a value outside is a broken feed.
MIN_EXPONENT = -12
MAX_EXPONENT = 12
MAX_DIGITS = 28


def parse_usd(value: str | Decimal) -> str:
    """The canonical decimal string of a positive USD price, or ValueError.

    Takes the source's text, or a Decimal parsed from JSON text. The canonical
    form has no exponent and no trailing zeros ("64123.4500" -> "64123.45").
    """
    if isinstance(value, str):
        if not _DECIMAL_TEXT.fullmatch(value):
            raise ValueError(f"not a decimal number: {value[:40]!r}")
        try:
            value = Decimal(value)
        except InvalidOperation:
            raise ValueError(f"not a decimal number: {value[:40]!r}") from None
    elif not isinstance(value, Decimal):
        raise ValueError(f"a price must be decimal text, not {type(value).__name__}")
    if not value.is_finite() or value <= 0:
        raise ValueError(f"a price must be a positive finite number, not {value}")
    if not MIN_EXPONENT <= value.adjusted() <= MAX_EXPONENT:
        raise ValueError(f"price out of range: {value:.3e}")
    # A context as wide as the number itself: normalize() drops trailing zeros and never rounds.
    exact = value.normalize(Context(prec=len(value.as_tuple().digits)))
    if len(exact.as_tuple().digits) > MAX_DIGITS:
        raise ValueError(f"a price has at most {MAX_DIGITS} significant digits")
    return format(exact, "f")


@dataclass(frozen=True)
class Rate:
    symbol: str
    usd: str  # canonical decimal string, USD per one whole unit
    source: str
    as_of: datetime

    def __post_init__(self):
        if self.symbol not in SYMBOLS:
            raise ValueError(f"unknown symbol {self.symbol!r}")
        if parse_usd(self.usd) != self.usd:
            raise ValueError(f"rate {self.usd!r} is not in canonical form")
        if self.as_of.tzinfo is None:
            raise ValueError("a rate's as_of must be timezone-aware")

    @property
    def price(self) -> Fraction:
        return Fraction(self.usd)


@dataclass(frozen=True)
class RatePolicy:
    max_age: timedelta
    stable_symbols: frozenset[str] = STABLE_SYMBOLS
    peg_guard: Fraction = Fraction(2, 100)
    # Source clocks run a little ahead of ours; beyond this a timestamp is bogus.
    max_clock_skew: timedelta = timedelta(seconds=10)
    # No single source is trusted alone: at least this many fresh ones, none further than `max_spread` (a
    # fraction of the lowest) from another.
    min_sources: int = 2
    max_spread: Fraction = Fraction(2, 100)

    def __post_init__(self):
        if self.max_age <= timedelta(0) or self.max_clock_skew < timedelta(0):
            raise ValueError("max_age must be positive and max_clock_skew not negative")
        if not 0 <= self.peg_guard < 1:
            raise ValueError("peg_guard must be in [0, 1)")
        if self.min_sources < 1 or not 0 <= self.max_spread < 1:
            raise ValueError("min_sources must be at least 1 and max_spread in [0, 1)")


class NoRate(StrEnum):
    """Why a symbol has no rate to quote at."""

    NONE_FRESH = "none_fresh"
    TOO_FEW_SOURCES = "too_few_sources"
    SOURCES_DISAGREE = "sources_disagree"
    OFF_PEG = "off_peg"


@dataclass(frozen=True)
class Judgement:
    rate: Rate | None
    why_none: NoRate | None = None


def is_fresh(rate: Rate, now: datetime, policy: RatePolicy) -> bool:
    return now - policy.max_age <= rate.as_of <= now + policy.max_clock_skew


def choose_rate(symbol: str, observations: list[Rate], now: datetime, policy: RatePolicy) -> Rate | None:
    """The rate to quote `symbol` at, or None when there is none to trust (judge_rate says why)."""
    return judge_rate(symbol, observations, now, policy).rate


def judge_rate(symbol: str, observations: list[Rate], now: datetime, policy: RatePolicy) -> Judgement:
    """The rate to quote `symbol` at, or why there is none.

    `observations` come in source priority order. Only fresh ones count: at least `min_sources` of them, all
    within `max_spread` of each other, or there is no rate (a source that went wrong is never quoted alone,
    and no source silently stands in for another). The first fresh one is quoted. A stablecoin is quoted at
    its peg, exactly 1, while every fresh observation sits within `peg_guard` of 1; outside it (a depeg)
    there is no rate at all.
    """
    if any(rate.symbol != symbol for rate in observations):
        raise ValueError(f"observations of another symbol given for {symbol}")
    fresh = [rate for rate in observations if is_fresh(rate, now, policy)]
    if not fresh:
        return Judgement(None, NoRate.NONE_FRESH)
    if len(fresh) < policy.min_sources:
        return Judgement(None, NoRate.TOO_FEW_SOURCES)
    prices = [rate.price for rate in fresh]
    if max(prices) - min(prices) > policy.max_spread * min(prices):
        return Judgement(None, NoRate.SOURCES_DISAGREE)
    chosen = fresh[0]
    if symbol not in policy.stable_symbols:
        return Judgement(chosen)
    if any(abs(price - 1) > policy.peg_guard for price in prices):
        return Judgement(None, NoRate.OFF_PEG)
    return Judgement(Rate(symbol, PEG, f"peg({chosen.source})", chosen.as_of))
