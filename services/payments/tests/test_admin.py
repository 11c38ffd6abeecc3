"""`kernodeck-admin payments`: the account keys' first addresses, and the rates file it writes."""

from datetime import UTC, datetime

import pytest

from kernodeck_payments.admin_keys import check_xpubs, derived_addresses
from kernodeck_payments.admin_rates import set_rate
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.rates.sources.file import FileRateSource
from services.payments.tests.conftest import TEST_KEYS

pytestmark = pytest.mark.unit

FIRST_BITCOIN = ["bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"]


def test_the_first_addresses_are_those_payments_hands_out_first(capsys):
    settings = PaymentsSettings(bitcoin_xpub=TEST_KEYS["bitcoin"])
    assert derived_addresses(settings, 2) == {"bitcoin": FIRST_BITCOIN}
    assert check_xpubs(settings, 1, [["bitcoin", "1", FIRST_BITCOIN[1]]]) == 0
    assert capsys.readouterr().out == f"bitcoin 0 {FIRST_BITCOIN[0]}\n"
    assert check_xpubs(settings, 1, [["bitcoin", "1", FIRST_BITCOIN[0]]]) == 1
    assert "MISMATCH bitcoin 1" in capsys.readouterr().err
    assert check_xpubs(settings, 1, [["litecoin", "0", FIRST_BITCOIN[0]]]) == 1  # no litecoin key configured


def test_set_rate_writes_what_the_file_source_reads(tmp_path):
    path = tmp_path / "rates.json"
    at = datetime(2026, 12, 1, 12, tzinfo=UTC)
    assert set_rate(path, "btc", "64000.50", now=at) == 0
    assert set_rate(path, "LTC", "101", now=at) == 0
    rates = {rate.symbol: (rate.usd, rate.as_of) for rate in FileRateSource(path).fetch(["BTC", "LTC", "ETH"])}
    assert rates == {"BTC": ("64000.5", at), "LTC": ("101", at)}  # as the source canonicalises it


def test_set_rate_refuses_a_bad_symbol_amount_or_no_file(tmp_path):
    path = tmp_path / "rates.json"
    assert set_rate(path, "DOGE", "1") == 1
    assert set_rate(path, "BTC", "0") == 1
    assert set_rate(path, "BTC", "abc") == 1
    assert set_rate(path, "BTC", "NaN") == 1
    assert set_rate(None, "BTC", "1") == 1
    assert not path.exists()
