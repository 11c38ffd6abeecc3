"""Coinbase's spot price: one request per pair."""

from collections.abc import Sequence

from kernodeck_kit.types import utcnow
from kernodeck_payments.rates.domain import SYMBOLS, Rate
from kernodeck_payments.rates.sources.base import RateSourceError, price
from kernodeck_payments.rates.sources.http_json import get_json


class CoinbaseSource:
    name = "coinbase"
    default_url = "https://api.coinbase.com"

    def __init__(self, base_url: str, timeout_s: float):
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def fetch(self, symbols: Sequence[str]) -> list[Rate]:
        rates = []
        for symbol in symbols:
            if symbol not in SYMBOLS:
                continue
            rate = self._spot(symbol)
            if rate is not None:
                rates.append(rate)
        return rates

    def _spot(self, symbol: str) -> Rate | None:
        try:
            body = get_json(f"{self.base_url}/v2/prices/{symbol}-USD/spot", self.timeout_s)
        except RateSourceError as exc:
            if exc.status == 404:  # Coinbase does not price that pair
                return None
            raise
        as_of = utcnow()
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, dict):
            raise RateSourceError(f"coinbase {symbol}: unexpected answer (no data object)")
        # Coinbase has answered with another pair than the one asked for.
        if data.get("base") != symbol or data.get("currency") != "USD":
            raise RateSourceError(f"coinbase {symbol}: answered for {data.get('base')}-{data.get('currency')}")
        return Rate(symbol, price(data.get("amount"), str, f"coinbase {symbol}"), self.name, as_of)
