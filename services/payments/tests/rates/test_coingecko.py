import pytest

from kernodeck_payments.rates.domain import SYMBOLS
from kernodeck_payments.rates.sources import CoinGeckoSource, RateSourceError

PATH = "/api/v3/simple/price"
UPDATED = 1740830400  # 2025-03-01T12:00:00Z


def test_every_coin_is_asked_in_one_request_with_full_precision_and_its_update_time(http_double):
    # Raw text: these numbers would not survive a float.
    http_double.reply(
        PATH,
        '{"bitcoin": {"usd": 64123.450000000000000001, "last_updated_at": 1740830400},'
        ' "ethereum": {"usd": 3201.1, "last_updated_at": 1740830401},'
        ' "tether": {"usd": 1.0001234567890123456, "last_updated_at": 1740830402},'
        ' "usd-coin": {"usd": 0.9999, "last_updated_at": 1740830403},'
        ' "tron": {"usd": 1.234e-1, "last_updated_at": 1740830404},'
        ' "solana": {"usd": 142, "last_updated_at": 1740830405},'
        ' "litecoin": {"usd": 84.12, "last_updated_at": 1740830406}}',
    )
    rates = CoinGeckoSource(http_double.url, timeout_s=2).fetch(list(SYMBOLS))
    assert http_double.requests == [
        (
            PATH,
            "ids=bitcoin,ethereum,tether,usd-coin,tron,solana,litecoin"
            "&vs_currencies=usd&precision=full&include_last_updated_at=true",
        )
    ]
    assert {r.symbol: r.usd for r in rates} == {
        "BTC": "64123.450000000000000001",
        "ETH": "3201.1",
        "USDT": "1.0001234567890123456",
        "USDC": "0.9999",
        "TRX": "0.1234",
        "SOL": "142",
        "LTC": "84.12",
    }
    btc = next(r for r in rates if r.symbol == "BTC")
    assert (btc.source, btc.as_of.isoformat()) == ("coingecko", "2025-03-01T12:00:00+00:00")


def test_a_coin_missing_from_the_answer_is_left_out(http_double):
    http_double.reply(PATH, {"bitcoin": {"usd": 64000, "last_updated_at": UPDATED}, "ethereum": {}})
    rates = CoinGeckoSource(http_double.url, 2).fetch(["BTC", "ETH", "SOL"])
    assert http_double.query()["ids"] == ["bitcoin,ethereum,solana"]
    assert [r.symbol for r in rates] == ["BTC"]


@pytest.mark.parametrize(
    "body",
    [
        "[]",
        '{"status": {"error_code": 429, "error_message": "You\'ve exceeded the Rate Limit."}}',
        '{"error": "coin not found"}',
        '{"bitcoin": 64000}',
        '{"bitcoin": {"usd": "64000", "last_updated_at": 1740830400}}',
        '{"bitcoin": {"usd": 64000}}',
        '{"bitcoin": {"usd": 64000, "last_updated_at": "yesterday"}}',
        '{"bitcoin": {"usd": 64000, "last_updated_at": 1740830400.5}}',
        '{"bitcoin": {"usd": 64000, "last_updated_at": 1e30}}',
        '{"bitcoin": {"usd": 1e400, "last_updated_at": 1740830400}}',
        '{"bitcoin": {"usd": NaN, "last_updated_at": 1740830400}}',
        '{"bitcoin": {"usd": 0, "last_updated_at": 1740830400}}',
        '{"bitcoin": {"usd": null, "last_updated_at": 1740830400}}',
    ],
)
def test_an_unexpected_shape_fails_the_source(http_double, body):
    http_double.reply(PATH, body)
    with pytest.raises(RateSourceError):
        CoinGeckoSource(http_double.url, 2).fetch(["BTC"])
