"""Exchange rates refreshed: every source asked (over HTTP, before any transaction), what they said kept."""

from collections.abc import Sequence
from typing import Protocol

from kernodeck_kit.units import Units
from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.rates.refresh import refresh
from kernodeck_payments.rates.sources import RateSource


class RatesUnit(Protocol):
    def save_observations(self, rates: Sequence[Rate]) -> None:
        """Each source's newest observation of each symbol, an older one than kept dropped."""


def refresh_rates(units: Units[RatesUnit], sources: Sequence[RateSource], symbols: Sequence[str]) -> int:
    """How many rates the sources gave; a failing source is logged and counted (rates.refresh), never fatal."""
    rates, _errors = refresh(sources, symbols)
    with units.transaction() as unit:
        unit.save_observations(rates)
    return len(rates)
