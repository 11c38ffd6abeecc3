import json
from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_payments.rates.domain import RatePolicy, choose_rate
from kernodeck_payments.rates.sources import FileRateSource, RateSourceError

pytestmark = pytest.mark.unit

AS_OF = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
POLICY = RatePolicy(max_age=timedelta(minutes=30), min_sources=1)


@pytest.fixture
def rates_file(tmp_path):
    path = tmp_path / "rates.json"
    path.write_text(json.dumps({"as_of": "2025-03-01T12:00:00Z", "rates": {"BTC": "64000.00", "USDT": "1.001"}}))
    return path


def test_the_file_gives_its_rates_as_of_its_declared_time(rates_file):
    rates = FileRateSource(rates_file).fetch(["BTC", "USDT", "ETH"])
    assert [(r.symbol, r.usd, r.source, r.as_of) for r in rates] == [
        ("BTC", "64000", "file", AS_OF),
        ("USDT", "1.001", "file", AS_OF),
    ]


def test_a_fresh_file_is_a_rate_and_a_stale_one_is_none(rates_file):
    (btc,) = FileRateSource(rates_file).fetch(["BTC"])
    assert choose_rate("BTC", [btc], AS_OF + timedelta(minutes=30), POLICY) == btc
    assert choose_rate("BTC", [btc], AS_OF + timedelta(minutes=30, seconds=1), POLICY) is None


def test_the_file_is_read_again_on_each_fetch(rates_file):
    source = FileRateSource(rates_file)
    source.fetch(["BTC"])
    rates_file.write_text(json.dumps({"as_of": "2025-03-01T13:00:00+01:00", "rates": {"BTC": "65000"}}))
    (btc,) = source.fetch(["BTC"])
    assert (btc.usd, btc.as_of) == ("65000", AS_OF)


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[]",
        '{"rates": {"BTC": "64000"}}',
        '{"as_of": "2025-03-01T12:00:00", "rates": {"BTC": "64000"}}',  # no offset
        '{"as_of": "yesterday", "rates": {"BTC": "64000"}}',
        '{"as_of": 1740830400, "rates": {"BTC": "64000"}}',
        '{"as_of": "2025-03-01T12:00:00Z"}',
        '{"as_of": "2025-03-01T12:00:00Z", "rates": {"BTC": 64000.00}}',
        '{"as_of": "2025-03-01T12:00:00Z", "rates": {"BTC": "-64000"}}',
        '{"as_of": "2025-03-01T12:00:00Z", "rates": {"BTCC": "64000"}}',  # a typo is not ignored
    ],
)
def test_a_malformed_file_fails_the_source(tmp_path, content):
    path = tmp_path / "rates.json"
    path.write_text(content)
    with pytest.raises(RateSourceError):
        FileRateSource(path).fetch(["BTC"])


def test_a_missing_file_fails_the_source(tmp_path):
    with pytest.raises(RateSourceError, match="No such file"):
        FileRateSource(tmp_path / "absent.json").fetch(["BTC"])
