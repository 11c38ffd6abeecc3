from datetime import timedelta

import pytest

from kernodeck_kit.types import utcnow
from kernodeck_payments.rates.domain import SYMBOLS
from kernodeck_payments.rates.sources import KrakenSource, RateSourceError

PATH = "/0/public/Ticker"


def ticker(last: str) -> dict:
    # A real ticker entry carries more than the last trade ("c"); the rest is ignored.
    return {
        "a": [last, "1", "1.000"],
        "b": [last, "2", "2.000"],
        "c": [last, "0.00100000"],
        "v": ["100.1", "2000.2"],
        "o": "1.00000",
    }


def answer(**result) -> dict:
    return {"error": [], "result": {key: ticker(last) for key, last in result.items()}}


def test_every_symbol_is_asked_in_one_request_and_mapped_from_krakens_names(http_double):
    http_double.reply(
        PATH,
        answer(
            XXBTZUSD="64123.45000",
            XETHZUSD="3201.10",
            XLTCZUSD="84.12",
            USDTZUSD="1.00020000",
            USDCUSD="0.99990000",
            SOLUSD="142.3100",
            TRXUSD="0.1234560",
        ),
    )
    before = utcnow()
    rates = KrakenSource(http_double.url, timeout_s=2).fetch(list(SYMBOLS))
    assert http_double.requests == [(PATH, "pair=XBTUSD,ETHUSD,USDTUSD,USDCUSD,TRXUSD,SOLUSD,LTCUSD")]
    assert {r.symbol: r.usd for r in rates} == {
        "BTC": "64123.45",
        "ETH": "3201.1",
        "LTC": "84.12",
        "USDT": "1.0002",
        "USDC": "0.9999",
        "SOL": "142.31",
        "TRX": "0.123456",
    }
    assert {r.source for r in rates} == {"kraken"}
    assert all(before <= r.as_of <= utcnow() for r in rates)


def test_only_the_symbols_asked_for_are_requested(http_double):
    http_double.reply(PATH, answer(XXBTZUSD="64000.0"))
    rates = KrakenSource(http_double.url + "/", timeout_s=2).fetch(["BTC"])
    assert http_double.query() == {"pair": ["XBTUSD"]}
    assert [(r.symbol, r.usd) for r in rates] == [("BTC", "64000")]


def test_a_pair_missing_from_the_result_is_left_out(http_double):
    http_double.reply(PATH, answer(XXBTZUSD="64000.0"))
    assert [r.symbol for r in KrakenSource(http_double.url, 2).fetch(["BTC", "ETH"])] == ["BTC"]


def test_a_result_keyed_by_the_asked_name_is_not_mistaken_for_krakens_name(http_double):
    http_double.reply(PATH, answer(XBTUSD="64000.0"))
    assert KrakenSource(http_double.url, 2).fetch(["BTC"]) == []


def test_krakens_error_list_fails_the_source(http_double):
    http_double.reply(PATH, {"error": ["EQuery:Unknown asset pair"]})
    with pytest.raises(RateSourceError, match="EQuery:Unknown asset pair"):
        KrakenSource(http_double.url, 2).fetch(["BTC"])


@pytest.mark.parametrize(
    "body",
    [
        {"result": {}},
        {"error": [], "result": []},
        {"error": [], "result": {"XXBTZUSD": {"c": []}}},
        {"error": [], "result": {"XXBTZUSD": {"c": "64000"}}},
        {"error": [], "result": {"XXBTZUSD": ["64000"]}},
        {"error": [], "result": {"XXBTZUSD": {"c": [64000.5, "1"]}}},  # a JSON number, not Kraken's text
        {"error": [], "result": {"XXBTZUSD": {"c": ["-1", "1"]}}},
    ],
)
def test_an_unexpected_shape_fails_the_source(http_double, body):
    http_double.reply(PATH, body)
    with pytest.raises(RateSourceError):
        KrakenSource(http_double.url, 2).fetch(["BTC"])


def test_nothing_to_ask_sends_nothing(http_double):
    assert KrakenSource(http_double.url, 2).fetch([]) == []
    assert http_double.requests == []


def test_a_rate_is_as_of_the_answer(http_double):
    http_double.reply(PATH, answer(XXBTZUSD="64000"))
    (rate,) = KrakenSource(http_double.url, 2).fetch(["BTC"])
    assert utcnow() - rate.as_of < timedelta(seconds=5)
