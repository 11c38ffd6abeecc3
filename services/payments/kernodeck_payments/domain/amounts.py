"""USD cents to crypto base units and back, exactly: a price is a Fraction
(USD per whole unit), never a float."""

import math
from fractions import Fraction

from .methods import Method


def _check_int(name: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")


def _check_price(price: Fraction) -> None:
    if not isinstance(price, Fraction):
        raise TypeError(f"a price must be a Fraction, not {type(price).__name__}")
    if price <= 0:
        raise ValueError(f"a price must be positive, got {price}")


def crypto_amount(usd_cents: int, price: Fraction, method: Method) -> int:
    """Base units to ask for `usd_cents`: USD / price rounded up to the
    method's quote precision, so the customer never pays less than asked."""
    _check_int("usd_cents", usd_cents, 1)
    _check_price(price)
    quote_steps = math.ceil(Fraction(usd_cents * 10**method.quote_decimals, 100) / price)
    return quote_steps * 10 ** (method.decimals - method.quote_decimals)


def usd_cents_for(base_units: int, price: Fraction, method: Method) -> int:
    """The USD value of `base_units` at `price`, rounded down to the cent:
    what a customer is credited for an amount received."""
    _check_int("base_units", base_units, 0)
    _check_price(price)
    return math.floor(Fraction(base_units * 100, 10**method.decimals) * price)


def format_amount(base_units: int, decimals: int) -> str:
    """Exact decimal text in whole units, without exponent or trailing zeros:
    (123456, 8) -> "0.00123456", (10**18, 18) -> "1"."""
    _check_int("base_units", base_units, 0)
    _check_int("decimals", decimals, 0)
    whole, fraction = divmod(base_units, 10**decimals)
    if fraction == 0:
        return str(whole)
    return f"{whole}.{fraction:0{decimals}d}".rstrip("0")
