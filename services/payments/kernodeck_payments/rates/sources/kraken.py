"""Kraken's public Ticker: one request for every pair, last trade price."""

from collections.abc import Sequence
from urllib.parse import urlencode

from kernodeck_kit.types import utcnow
from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.rates.sources.base import RateSourceError, price
from kernodeck_payments.rates.sources.http_json import get_json

# symbol -> (the pair as asked, the key Kraken answers under). Kraken keeps
# its legacy X/Z asset prefixes in the answer: XBTUSD comes back as XXBTZUSD.
PAIRS = {
    "BTC": ("XBTUSD", "XXBTZUSD"),
    "ETH": ("ETHUSD", "XETHZUSD"),
    "LTC": ("LTCUSD", "XLTCZUSD"),
    "USDT": ("USDTUSD", "USDTZUSD"),
    "USDC": ("USDCUSD", "USDCUSD"),
    "SOL": ("SOLUSD", "SOLUSD"),
    "TRX": ("TRXUSD", "TRXUSD"),
}


class KrakenSource:
    name = "kraken"
    default_url = "https://api.kraken.com"

    def __init__(self, base_url: str, timeout_s: float):
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    def fetch(self, symbols: Sequence[str]) -> list[Rate]:
        wanted = [symbol for symbol in symbols if symbol in PAIRS]
        if not wanted:
            return []
        query = urlencode({"pair": ",".join(PAIRS[symbol][0] for symbol in wanted)}, safe=",")
        body = get_json(f"{self.base_url}/0/public/Ticker?{query}", self.timeout_s)
        # Kraken gives no time for a ticker: it is the price as of this answer.
        as_of = utcnow()
        if not isinstance(body, dict) or not isinstance(body.get("error"), list):
            raise RateSourceError("kraken: unexpected answer (no error list)")
        if body["error"]:
            raise RateSourceError("kraken: " + "; ".join(map(str, body["error"])))
        result = body.get("result")
        if not isinstance(result, dict):
            raise RateSourceError("kraken: unexpected answer (no result object)")
        rates = []
        for symbol in wanted:
            ticker = result.get(PAIRS[symbol][1])
            if ticker is None:
                continue
            last_trade = ticker.get("c") if isinstance(ticker, dict) else None
            if not isinstance(last_trade, list) or not last_trade:
                raise RateSourceError(f"kraken: {PAIRS[symbol][1]} has no last trade")
            rates.append(Rate(symbol, price(last_trade[0], str, f"kraken {symbol}"), self.name, as_of))
        return rates
