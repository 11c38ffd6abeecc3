"""Two rate sources through the running service: Kraken (its HTTP API, served by the local double) and the
operator's rates file. A rate is quoted only while both are fresh and within PAYMENTS_RATE_MAX_SPREAD_PERCENT."""

import pytest
from prometheus_client import REGISTRY

from services.payments.tests.conftest import RATES
from services.payments.tests.helpers import code_of, report_watchers, run_entrypoint
from services.payments.tests.rates.test_kraken import PATH, answer

ACC = "acc-rates"


@pytest.fixture
def changed_settings(http_double):
    return {"rate_sources": "kraken,file", "kraken_url": http_double.url, "rate_min_sources": 2}


def kraken_says(running, http_double, btc: str) -> None:
    http_double.reply(PATH, answer(XXBTZUSD=btc))
    run_entrypoint(running["payments"], "refresh_rates")


def unavailable(symbol: str, reason: str) -> float | None:
    """kernodeck_rate_unavailable as a scrape reads it from payments' tables."""
    return REGISTRY.get_sample_value("kernodeck_rate_unavailable", {"symbol": symbol, "reason": reason})


def btc_reason(payments) -> str | None:
    return next(m["reason"] for m in payments.list_methods() if m["asset"] == "BTC")


@pytest.fixture
def payments_up(payments, watcher):
    """The payments proxy once every network's watcher has reported (not payments_up: it waits for every
    rate, and here only BTC has two sources)."""
    report_watchers(watcher)
    return payments


def test_two_sources_within_the_spread_quote_the_first(running, payments_up, http_double):
    assert RATES["BTC"] == "50000"
    kraken_says(running, http_double, "51000.00")  # 2.000 % above the file's 50,000: at the bound
    assert btc_reason(payments_up) is None
    topup = payments_up.create_topup(ACC, 10_000, "BTC", "bitcoin")
    assert (topup["payment"]["rate"], topup["payment"]["amount_base_units"]) == ("51000", 196_079)


def test_two_sources_further_apart_than_the_spread_give_no_rate(running, payments_up, http_double):
    kraken_says(running, http_double, "51000.01")  # just past 2 %
    assert btc_reason(payments_up) == "rate_unavailable"
    assert code_of(payments_up.create_topup, ACC, 10_000, "BTC", "bitcoin") == "rate_unavailable"
    assert unavailable("BTC", "sources_disagree") == 1
    kraken_says(running, http_double, "49500")  # back within the spread: quoted again
    assert payments_up.create_topup(ACC, 10_000, "BTC", "bitcoin")["payment"]["rate"] == "49500"
    assert unavailable("BTC", "sources_disagree") == 0


def test_a_symbol_only_one_source_prices_has_no_rate(running, payments_up, http_double):
    kraken_says(running, http_double, "50000")  # Kraken's answer holds BTC alone: LTC has the file only
    reasons = {(m["asset"], m["network"]): m["reason"] for m in payments_up.list_methods()}
    assert reasons[("BTC", "bitcoin")] is None
    assert reasons[("LTC", "litecoin")] == "rate_unavailable"
    assert unavailable("LTC", "too_few_sources") == 1
    assert code_of(payments_up.create_topup, ACC, 10_000, "LTC", "litecoin") == "rate_unavailable"
