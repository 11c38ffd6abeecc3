"""The service's upkeep, in memory: rates refreshed whatever one source does, the Solana pool watched, a method
switched by an operator. test_intents.py, rates/ and test_admin.py run the same use cases over the broker and
PostgreSQL."""

import logging
from datetime import timedelta

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.rates.sources import RateSourceError
from kernodeck_payments.use_cases.intake import check_solana_pool
from kernodeck_payments.use_cases.methods import switch_method
from kernodeck_payments.use_cases.rates import refresh_rates
from services.payments.tests.memory import intake_units, methods_units, rates_units
from services.payments.tests.test_open_payment import BTC, POOL, SETTINGS, T0, board

pytestmark = pytest.mark.unit


class Source:
    def __init__(self, name: str, *rates: Rate, fails: bool = False):
        self.name, self.rates, self.fails = name, list(rates), fails

    def fetch(self, symbols) -> list[Rate]:
        if self.fails:
            raise RateSourceError(f"{self.name} is down")
        return [rate for rate in self.rates if rate.symbol in symbols]


def test_rates_of_every_source_that_answers_are_kept_the_newest_of_each():
    earlier = Rate("BTC", "49000", "kraken", T0 - timedelta(minutes=1))
    sources = [
        Source("coinbase", Rate("BTC", "50000", "coinbase", T0), Rate("ETH", "3000", "coinbase", T0)),
        Source("coingecko", fails=True),
        Source("kraken", Rate("BTC", "50100", "kraken", T0), earlier),
    ]
    units = rates_units()
    assert refresh_rates(units, sources, ["BTC", "ETH"]) == 4
    kept = {key: rate.usd for key, rate in units.state.observations.items()}
    assert kept == {("BTC", "coinbase"): "50000", ("ETH", "coinbase"): "3000", ("BTC", "kraken"): "50100"}


def test_no_source_answering_keeps_nothing_and_raises_nothing():
    units = rates_units()
    assert refresh_rates(units, [Source("coinbase", fails=True)], ["BTC"]) == 0
    assert units.state.observations == {}


def test_the_solana_pool_running_low_is_said(caplog):
    caplog.set_level(logging.WARNING)
    assert check_solana_pool(intake_units(board(), POOL), SETTINGS) == 2  # under the default 20
    assert "the Solana address pool is running low" in caplog.text
    caplog.clear()
    assert check_solana_pool(intake_units(board(), POOL), SETTINGS.model_copy(update={"solana_pool_low": 2})) == 2
    assert caplog.text == ""


def test_an_operator_switches_a_method_recorded_with_who_and_when():
    units = methods_units()
    switch_method(units, "op1", BTC, False, T0)
    assert units.state.switches == {("BTC", "bitcoin"): (False, "op1", T0)}
    with pytest.raises(ServiceError) as caught:
        switch_method(units, "op1", BTC, "yes", T0)
    assert caught.value.detail == "enabled is true or false"
