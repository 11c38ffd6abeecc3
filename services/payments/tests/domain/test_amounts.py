from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernodeck_payments.domain.amounts import crypto_amount, usd_cents_for
from kernodeck_payments.domain.methods import METHODS, find_method

pytestmark = pytest.mark.unit

BTC = find_method("BTC", "bitcoin")
ETH = find_method("ETH", "ethereum")
USDT = find_method("USDT", "tron")
SOL = find_method("SOL", "solana")


def _step(method) -> int:
    return 10 ** (method.decimals - method.quote_decimals)


def _price_for(usd_cents: int, base_units: Fraction, method) -> Fraction:
    """The price at which `usd_cents` buys exactly `base_units`."""
    return Fraction(usd_cents * 10**method.decimals, 100) / base_units


# --- crypto_amount ----------------------------------------------------------


@pytest.mark.parametrize(
    ("usd_cents", "price", "method", "expected"),
    [
        (10_000, Fraction(50_000), BTC, 200_000),  # $100 at $50,000: 0.002 BTC
        (10_000, Fraction(30_000), BTC, 333_334),  # 0.0033333333... BTC, up to the satoshi
        (200_000, Fraction(3_000), ETH, 666_667 * 10**12),  # 0.6666666... ETH, up to 6 decimals
        (10_000, Fraction(1), USDT, 100_000_000),  # 100 USDT
        (10_000, Fraction("0.9998"), USDT, 100_030_000),  # 100.020004... USDT, up to the cent
        (10_000, Fraction("1.0002"), USDT, 99_990_000),  # 99.980003... USDT, up to 99.99
        (1, Fraction("143.27"), SOL, 70 * 10**3),  # 0.0000697983... SOL, up to 0.000070
    ],
)
def test_crypto_amount_examples(usd_cents, price, method, expected):
    assert crypto_amount(usd_cents, price, method) == expected


@pytest.mark.parametrize("method", METHODS, ids=lambda method: f"{method.asset}-{method.network}")
def test_an_amount_on_a_quote_step_stays_and_one_base_unit_over_goes_up_a_step(method):
    step = _step(method)
    on_step = 1234 * step
    assert crypto_amount(5_000, _price_for(5_000, on_step, method), method) == on_step
    assert crypto_amount(5_000, _price_for(5_000, on_step + 1, method), method) == on_step + step
    assert crypto_amount(5_000, _price_for(5_000, on_step - Fraction(1, 2), method), method) == on_step


@pytest.mark.parametrize("usd_cents", [True, 100.0, Decimal(100), "100", None])
def test_crypto_amount_refuses_cents_that_are_not_an_int(usd_cents):
    with pytest.raises(TypeError):
        crypto_amount(usd_cents, Fraction(1), USDT)


@pytest.mark.parametrize("usd_cents", [0, -1])
def test_crypto_amount_refuses_non_positive_cents(usd_cents):
    with pytest.raises(ValueError):
        crypto_amount(usd_cents, Fraction(1), USDT)


@pytest.mark.parametrize("price", [50_000.0, 50_000, Decimal(50_000), "50000", None])
def test_crypto_amount_refuses_a_price_that_is_not_a_fraction(price):
    with pytest.raises(TypeError):
        crypto_amount(100, price, BTC)


@pytest.mark.parametrize("price", [Fraction(0), Fraction(-50_000)])
def test_crypto_amount_refuses_a_non_positive_price(price):
    with pytest.raises(ValueError):
        crypto_amount(100, price, BTC)


# --- usd_cents_for ----------------------------------------------------------


@pytest.mark.parametrize(
    ("base_units", "price", "method", "expected"),
    [
        (200_000, Fraction(50_000), BTC, 10_000),
        (333_334, Fraction(30_000), BTC, 10_000),  # $100.0002, down to the cent
        (333_333, Fraction(30_000), BTC, 9_999),  # $99.9999
        (1, Fraction(30_000), BTC, 0),  # 1 satoshi is $0.0003
        (0, Fraction(30_000), BTC, 0),
        (10**18, Fraction("3456.789"), ETH, 345_678),
        (99_999_999, Fraction(1), USDT, 9_999),  # 99.999999 USDT
    ],
)
def test_usd_cents_for_examples(base_units, price, method, expected):
    assert usd_cents_for(base_units, price, method) == expected


def test_usd_cents_for_refuses_negative_or_non_int_amounts():
    with pytest.raises(ValueError):
        usd_cents_for(-1, Fraction(1), USDT)
    with pytest.raises(TypeError):
        usd_cents_for(True, Fraction(1), USDT)
    with pytest.raises(TypeError):
        usd_cents_for(1.0, Fraction(1), USDT)
    with pytest.raises(TypeError):
        usd_cents_for(1, 1.0, USDT)
    with pytest.raises(ValueError):
        usd_cents_for(1, Fraction(0), USDT)


# --- properties -------------------------------------------------------------

methods = st.sampled_from(METHODS)
cents = st.integers(min_value=1, max_value=10**9)  # up to $10,000,000
# Rates as quoted: a decimal with up to 8 places, from 0.00000001 to 10**12 USD.
prices = st.builds(
    lambda digits, places: Fraction(digits, 10**places),
    st.integers(min_value=1, max_value=10**12),
    st.integers(min_value=0, max_value=8),
)


@given(cents, prices, methods)
def test_crypto_amount_never_asks_less_than_the_usd_price(usd_cents, price, method):
    amount = crypto_amount(usd_cents, price, method)
    assert Fraction(amount, 10**method.decimals) * price >= Fraction(usd_cents, 100)


@given(cents, prices, methods)
def test_crypto_amount_rounds_up_by_less_than_one_quote_step(usd_cents, price, method):
    amount = crypto_amount(usd_cents, price, method)
    exact = Fraction(usd_cents, 100) / price * 10**method.decimals
    assert amount % _step(method) == 0
    assert 0 <= amount - exact < _step(method)


@given(cents, prices, methods)
def test_paying_the_amount_asked_credits_at_least_the_usd_price(usd_cents, price, method):
    assert usd_cents_for(crypto_amount(usd_cents, price, method), price, method) >= usd_cents


@given(st.integers(min_value=0, max_value=10**27), prices, methods)
def test_usd_cents_for_credits_less_than_a_cent_below_the_value(base_units, price, method):
    value_cents = Fraction(base_units * 100, 10**method.decimals) * price
    assert 0 <= value_cents - usd_cents_for(base_units, price, method) < 1
