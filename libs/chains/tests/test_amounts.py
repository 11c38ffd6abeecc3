import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kernodeck_chains.amounts import format_amount

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("base_units", "decimals", "expected"),
    [
        (123_456, 8, "0.00123456"),
        (10**18, 18, "1"),
        (1_500_000, 6, "1.5"),
        (1, 8, "0.00000001"),
        (1, 18, "0.000000000000000001"),
        (0, 8, "0"),
        (100_030_000, 6, "100.03"),
        (2_100_000_000_000_000, 8, "21000000"),
        (2_030_000_000, 8, "20.3"),
        (7, 0, "7"),
    ],
)
def test_format_amount_examples(base_units, decimals, expected):
    assert format_amount(base_units, decimals) == expected


@pytest.mark.parametrize(("base_units", "decimals"), [(-1, 8), (1, -1), (True, 8), (1, 8.0)])
def test_format_amount_refuses_negative_or_non_int_arguments(base_units, decimals):
    with pytest.raises((TypeError, ValueError)):
        format_amount(base_units, decimals)


@given(st.integers(min_value=0, max_value=10**30), st.integers(min_value=0, max_value=18))
def test_format_amount_is_exact_plain_decimal_text(base_units, decimals):
    text = format_amount(base_units, decimals)
    assert re.fullmatch(r"(0|[1-9]\d*)(\.\d*[1-9])?", text)
    assert Fraction(text) * 10**decimals == base_units
