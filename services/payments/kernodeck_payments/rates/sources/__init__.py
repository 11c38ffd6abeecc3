"""Where rates come from: public price APIs and the operator's file."""

from pathlib import Path

from kernodeck_payments.rates.sources.base import RateSource, RateSourceError
from kernodeck_payments.rates.sources.coinbase import CoinbaseSource
from kernodeck_payments.rates.sources.coingecko import CoinGeckoSource
from kernodeck_payments.rates.sources.file import FileRateSource
from kernodeck_payments.rates.sources.kraken import KrakenSource

__all__ = [
    "CoinGeckoSource",
    "CoinbaseSource",
    "FileRateSource",
    "KrakenSource",
    "RateSource",
    "RateSourceError",
    "build_sources",
]

HTTP_SOURCES = {source.name: source for source in (KrakenSource, CoinGeckoSource, CoinbaseSource)}
SOURCE_NAMES = (*HTTP_SOURCES, FileRateSource.name)


def build_sources(names: list[str], urls: dict[str, str], file_path: Path | None, timeout_s: float) -> list[RateSource]:
    """The sources in `names`, in that (priority) order.

    `urls` overrides a source's public base URL (tests point them at local
    doubles). A misspelt name or URL key is an error, not a source quietly missing.
    """
    for name in [*names, *urls]:
        if name not in SOURCE_NAMES:
            raise ValueError(f"unknown rate source {name!r}; known: {', '.join(SOURCE_NAMES)}")
    if len(set(names)) != len(names):
        raise ValueError(f"a rate source is listed twice: {names}")
    if FileRateSource.name in urls:
        raise ValueError("the file rate source takes a path, not a URL")
    sources: list[RateSource] = []
    for name in names:
        if name == FileRateSource.name:
            if file_path is None:
                raise ValueError("the file rate source needs a rates file path")
            sources.append(FileRateSource(file_path))
        else:
            source = HTTP_SOURCES[name]
            sources.append(source(urls.get(name, source.default_url), timeout_s))
    return sources
