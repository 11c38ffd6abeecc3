from datetime import UTC, datetime

import pytest
from prometheus_client import REGISTRY

from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.rates.refresh import refresh
from kernodeck_payments.rates.sources import RateSourceError

pytestmark = pytest.mark.unit

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


class FakeSource:
    def __init__(self, name: str, answer):
        self.name = name
        self.answer = answer
        self.asked = []

    def fetch(self, symbols):
        self.asked.append(list(symbols))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def fetches(source: str, outcome: str) -> float:
    return REGISTRY.get_sample_value("kernodeck_rate_fetch_total", {"source": source, "outcome": outcome}) or 0


def timings(source: str) -> float:
    return REGISTRY.get_sample_value("kernodeck_rate_fetch_seconds_count", {"source": source}) or 0


def test_every_source_is_asked_and_failures_are_reported_not_raised():
    btc = Rate("BTC", "64000", "t-first", T0)
    eth = Rate("ETH", "3200", "t-last", T0)
    sources = [
        FakeSource("t-first", [btc]),
        FakeSource("t-down", RateSourceError("http://x: HTTP 502", status=502)),
        FakeSource("t-buggy", KeyError("c")),
        FakeSource("t-last", [eth]),
    ]
    before = {name: (fetches(name, "ok"), fetches(name, "error"), timings(name)) for name in [s.name for s in sources]}

    rates, errors = refresh(sources, ["BTC", "ETH"])

    assert rates == [btc, eth]
    assert errors == {"t-down": "http://x: HTTP 502", "t-buggy": "'c'"}
    assert all(source.asked == [["BTC", "ETH"]] for source in sources)
    after = {name: (fetches(name, "ok"), fetches(name, "error"), timings(name)) for name in before}
    assert {name: tuple(a - b for a, b in zip(after[name], before[name], strict=True)) for name in before} == {
        "t-first": (1, 0, 1),
        "t-down": (0, 1, 1),
        "t-buggy": (0, 1, 1),
        "t-last": (1, 0, 1),
    }


def test_an_error_without_a_message_is_still_named():
    _, errors = refresh([FakeSource("t-silent", RateSourceError(""))], ["BTC"])
    assert errors == {"t-silent": "RateSourceError"}
