"""CoinGecko's simple price: one request for every coin, with each price's own update time."""

from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from urllib.parse import urlencode

from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.rates.sources.base import RateSourceError, price
from kernodeck_payments.rates.sources.http_json import get_json

COIN_IDS = {
    "BTC": "bitcoin",
    "ETH": "ethereum",
    "USDT": "tether",
    "USDC": "usd-coin",
    "TRX": "tron",
    "SOL": "solana",
    "LTC": "litecoin",
}


class CoinGeckoSource:
    name = "coingecko"
    default_url = "https://api.coingecko.com"

    def __init__(self, base_url: str, timeout_s: float):
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def fetch(self, symbols: Sequence[str]) -> list[Rate]:
        wanted = [symbol for symbol in symbols if symbol in COIN_IDS]
        if not wanted:
            return []
        query = urlencode(
            {
                "ids": ",".join(COIN_IDS[symbol] for symbol in wanted),
                "vs_currencies": "usd",
                "precision": "full",
                # CoinGecko caches prices; without their time a stale one would pass as fresh.
                "include_last_updated_at": "true",
            },
            safe=",",
        )
        body = get_json(f"{self.base_url}/api/v3/simple/price?{query}", self.timeout_s)
        if not isinstance(body, dict):
            raise RateSourceError("coingecko: unexpected answer (not an object)")
        if "status" in body or "error" in body:  # its error shapes, sometimes sent with 200
            raise RateSourceError(f"coingecko: {body.get('status') or body.get('error')}")
        rates = []
        for symbol in wanted:
            coin = body.get(COIN_IDS[symbol])
            if coin is None:
                continue
            if not isinstance(coin, dict):
                raise RateSourceError(f"coingecko: unexpected entry for {COIN_IDS[symbol]}")
            if "usd" not in coin:
                continue
            usd = price(coin["usd"], Decimal, f"coingecko {symbol}")
            rates.append(Rate(symbol, usd, self.name, _timestamp(coin.get("last_updated_at"), symbol)))
        return rates


def _timestamp(value, symbol: str) -> datetime:
    if not isinstance(value, Decimal) or not value.is_finite() or value != value.to_integral_value() or value <= 0:
        raise RateSourceError(f"coingecko {symbol}: last_updated_at must be a Unix time, not {value!r}")
    try:
        return datetime.fromtimestamp(int(value), UTC)
    except (OverflowError, OSError, ValueError):
        raise RateSourceError(f"coingecko {symbol}: last_updated_at {value} is out of range") from None
