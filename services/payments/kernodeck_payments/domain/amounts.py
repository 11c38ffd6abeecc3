"""USD cents to crypto base units and back, exactly: a price is a Fraction
(USD per whole unit), never a float."""

import math
from fractions import Fraction

from kernodeck_chains.amounts import check_int

from .methods import Method


def _check_price(price: Fraction) -> None:
    if not isinstance(price, Fraction):
        raise TypeError(f"a price must be a Fraction, not {type(price).__name__}")
    if price <= 0:
        raise ValueError(f"a price must be positive, got {price}")


def crypto_amount(usd_cents: int, price: Fraction, method: Method) -> int:
    """Base units to ask for `usd_cents`: USD / price rounded up to the
    method's quote precision, so the customer never pays less than asked."""
    check_int("usd_cents", usd_cents, 1)
    _check_price(price)
    quote_steps = math.ceil(Fraction(usd_cents * 10**method.quote_decimals, 100) / price)
    return quote_steps * 10 ** (method.decimals - method.quote_decimals)


def usd_cents_for(base_units: int, price: Fraction, method: Method) -> int:
    """The USD value of `base_units` at `price`, rounded down to the cent:
    what a customer is credited for an amount received."""
    check_int("base_units", base_units, 0)
    _check_price(price)
    return math.floor(Fraction(base_units * 100, 10**method.decimals) * price)
