import pytest

from kernodeck_contracts.money import format_usd, parse_usd

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("text", "cents"),
    [("0", 0), ("1", 100), ("1.5", 150), ("1234.50", 123450), ("10000", 1_000_000), ("0.01", 1)],
)
def test_parse_usd(text, cents):
    assert parse_usd(text) == cents


@pytest.mark.parametrize("text", ["", "-1", "1.234", "1e3", "01", " 1", "1.", ".5", "NaN", 12, "100\n", "1 "])
def test_parse_usd_refuses(text):
    with pytest.raises(ValueError):
        parse_usd(text)


@pytest.mark.parametrize(("cents", "text"), [(0, "0.00"), (5, "0.05"), (123450, "1234.50")])
def test_format_usd(cents, text):
    assert format_usd(cents) == text


@pytest.mark.parametrize("cents", [-1, 1.5, True, "1"])
def test_format_usd_refuses(cents):
    with pytest.raises(ValueError):
        format_usd(cents)
