import pytest

from kernodeck_payments.rates.sources import CoinbaseSource, RateSourceError


def spot(base: str, amount: str, currency: str = "USD") -> dict:
    return {"data": {"amount": amount, "base": base, "currency": currency}}


def test_each_pair_is_asked_on_its_own_path(http_double):
    http_double.reply("/v2/prices/BTC-USD/spot", spot("BTC", "64123.45"))
    http_double.reply("/v2/prices/USDC-USD/spot", spot("USDC", "1.000"))
    rates = CoinbaseSource(http_double.url, timeout_s=2).fetch(["BTC", "USDC"])
    assert http_double.requests == [("/v2/prices/BTC-USD/spot", ""), ("/v2/prices/USDC-USD/spot", "")]
    assert [(r.symbol, r.usd, r.source) for r in rates] == [("BTC", "64123.45", "coinbase"), ("USDC", "1", "coinbase")]


def test_a_pair_coinbase_does_not_price_is_left_out(http_double):
    http_double.reply("/v2/prices/BTC-USD/spot", spot("BTC", "64000"))
    http_double.reply("/v2/prices/TRX-USD/spot", {"errors": [{"id": "not_found", "message": "Invalid currency"}]}, 404)
    assert [r.symbol for r in CoinbaseSource(http_double.url, 2).fetch(["BTC", "TRX"])] == ["BTC"]


@pytest.mark.parametrize(
    "body",
    [
        spot("ETH", "3200"),  # an answer for another pair than the one asked
        spot("BTC", "64000", currency="EUR"),
        {"data": {"amount": 64000, "base": "BTC", "currency": "USD"}},
        {"data": {"base": "BTC", "currency": "USD"}},
        {"data": []},
        {"amount": "64000"},
    ],
)
def test_an_unexpected_answer_fails_the_source(http_double, body):
    http_double.reply("/v2/prices/BTC-USD/spot", body)
    with pytest.raises(RateSourceError):
        CoinbaseSource(http_double.url, 2).fetch(["BTC"])
