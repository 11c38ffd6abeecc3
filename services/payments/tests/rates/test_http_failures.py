"""Every HTTP source fails the same way on transport and protocol errors."""

import socket
import time

import pytest

from kernodeck_payments.rates.sources import CoinbaseSource, CoinGeckoSource, KrakenSource, RateSourceError

SOURCES = [
    (KrakenSource, "/0/public/Ticker"),
    (CoinGeckoSource, "/api/v3/simple/price"),
    (CoinbaseSource, "/v2/prices/BTC-USD/spot"),
]


@pytest.fixture(params=SOURCES, ids=[source.name for source, _ in SOURCES])
def source_and_path(request):
    return request.param


def test_a_slow_source_times_out(http_double, source_and_path):
    source, path = source_and_path
    http_double.reply(path, {}, delay_s=5)
    started = time.monotonic()
    with pytest.raises(RateSourceError, match="timed out"):
        source(http_double.url, timeout_s=0.3).fetch(["BTC"])
    assert time.monotonic() - started < 2


def test_a_refused_connection_fails_the_source(source_and_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(RateSourceError, match=r"(?i)refused"):
        source_and_path[0](f"http://127.0.0.1:{port}", timeout_s=2).fetch(["BTC"])


@pytest.mark.parametrize("status", [500, 502, 429, 403, 400])
def test_an_http_error_fails_the_source(http_double, source_and_path, status):
    source, path = source_and_path
    http_double.reply(path, {"error": "nope"}, status=status)
    with pytest.raises(RateSourceError, match=f"HTTP {status}") as caught:
        source(http_double.url, timeout_s=2).fetch(["BTC"])
    assert caught.value.status == status


@pytest.mark.parametrize("body", ["<html>Bad gateway</html>", "", '{"truncated": ', "[" * 100_000])
def test_an_answer_that_is_not_json_fails_the_source(http_double, source_and_path, body):
    source, path = source_and_path
    http_double.reply(path, body)
    with pytest.raises(RateSourceError, match="not valid JSON"):
        source(http_double.url, timeout_s=2).fetch(["BTC"])


def test_an_oversized_answer_fails_the_source(http_double, source_and_path):
    source, path = source_and_path
    http_double.reply(path, '"' + "x" * (1 << 20) + '"')
    with pytest.raises(RateSourceError, match="larger than"):
        source(http_double.url, timeout_s=2).fetch(["BTC"])


def test_valid_json_of_the_wrong_shape_fails_the_source(http_double, source_and_path):
    source, path = source_and_path
    http_double.reply(path, [1, 2, 3])
    with pytest.raises(RateSourceError):
        source(http_double.url, timeout_s=2).fetch(["BTC"])
