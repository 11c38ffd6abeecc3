"""Ask every source for its rates; one failing source never stops the others."""

import logging
import time
from collections.abc import Sequence

from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.rates.metrics import RATE_FETCH_SECONDS, RATE_FETCH_TOTAL
from kernodeck_payments.rates.sources import RateSource, RateSourceError

log = logging.getLogger(__name__)


def refresh(sources: Sequence[RateSource], symbols: Sequence[str]) -> tuple[list[Rate], dict[str, str]]:
    """(the rates fetched, the error text of each source that failed). Never raises."""
    rates: list[Rate] = []
    errors: dict[str, str] = {}
    for source in sources:
        started = time.monotonic()
        try:
            fetched = source.fetch(symbols)
        except Exception as exc:
            errors[source.name] = str(exc) or type(exc).__name__
            RATE_FETCH_TOTAL.labels(source.name, "error").inc()
            # A RateSourceError is the outside world; anything else is a bug here.
            log.warning("rate source %s failed: %s", source.name, exc, exc_info=not isinstance(exc, RateSourceError))
        else:
            rates.extend(fetched)
            RATE_FETCH_TOTAL.labels(source.name, "ok").inc()
        finally:
            RATE_FETCH_SECONDS.labels(source.name).observe(time.monotonic() - started)
    return rates, errors
