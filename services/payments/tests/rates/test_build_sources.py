from pathlib import Path

import pytest

from kernodeck_payments.rates.sources import (
    CoinbaseSource,
    CoinGeckoSource,
    FileRateSource,
    KrakenSource,
    build_sources,
)

pytestmark = pytest.mark.unit


def test_sources_come_in_the_given_order_with_their_urls_and_timeout():
    sources = build_sources(
        ["file", "coingecko", "kraken", "coinbase"], {"kraken": "http://127.0.0.1:9/"}, Path("/etc/rates.json"), 3.5
    )
    assert [type(s) for s in sources] == [FileRateSource, CoinGeckoSource, KrakenSource, CoinbaseSource]
    assert [s.name for s in sources] == ["file", "coingecko", "kraken", "coinbase"]
    assert sources[0].path == Path("/etc/rates.json")
    assert (sources[1].base_url, sources[1].timeout_s) == ("https://api.coingecko.com", 3.5)
    assert sources[2].base_url == "http://127.0.0.1:9"


@pytest.mark.parametrize(
    ("names", "urls", "file_path", "message"),
    [
        (["kraken", "binance"], {}, None, "unknown rate source 'binance'"),
        (["kraken"], {"krakken": "http://127.0.0.1:9"}, None, "unknown rate source 'krakken'"),
        (["kraken", "kraken"], {}, None, "listed twice"),
        (["file"], {}, None, "needs a rates file path"),
        (["file"], {"file": "http://127.0.0.1:9"}, Path("rates.json"), "takes a path"),
    ],
)
def test_a_wrong_setting_is_an_error(names, urls, file_path, message):
    with pytest.raises(ValueError, match=message):
        build_sources(names, urls, file_path, 5)
