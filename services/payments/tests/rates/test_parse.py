from decimal import Decimal

import pytest

from kernodeck_payments.rates.domain import MAX_DIGITS, parse_usd

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("64123.45", "64123.45"),
        ("64123.450000", "64123.45"),
        ("100", "100"),
        ("1.0", "1"),
        ("0.00001234", "0.00001234"),
        ("6.4123E+4", "64123"),
        ("1e-12", "0.000000000001"),
        ("0.1000000000000000055511151231", "0.1000000000000000055511151231"),  # what float(0.1) would lose
    ],
)
def test_decimal_text_becomes_canonical(text, canonical):
    assert parse_usd(text) == canonical


def test_a_decimal_from_json_is_taken_as_is():
    assert parse_usd(Decimal("0.99987654321098765432")) == "0.99987654321098765432"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "abc",
        "64,123.45",
        " 64123.45",
        "1_000",
        "+5",
        ".5",
        "5.",
        "\u0663",  # an Arabic-Indic digit, which Decimal() itself would take
        "NaN",
        "nan",
        "Infinity",
        "inf",
        "-1",
        "-0.5",
        "0",
        "0.000",
        "1e400",
        "1e-400",
        "1e13",
        "1e-13",
        "1e99999999999999999999",
        "1" + "1" * MAX_DIGITS,
    ],
)
def test_garbage_and_absurd_prices_are_refused(text):
    with pytest.raises(ValueError):
        parse_usd(text)


@pytest.mark.parametrize("value", [64123.45, 64123, True, None, Decimal("NaN"), Decimal("-Infinity"), Decimal("-1")])
def test_anything_but_decimal_text_or_a_finite_positive_decimal_is_refused(value):
    with pytest.raises(ValueError):
        parse_usd(value)
