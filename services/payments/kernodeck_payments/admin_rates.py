"""The operator's rates file (PAYMENTS_RATE_FILE), written by `kernodeck-admin payments set-rate`.

Payments reads it at its next refresh (PAYMENTS_RATE_REFRESH_S) as the source `file`: it is the rate in use
when `file` comes first in PAYMENTS_RATE_SOURCES, else whenever the sources before it are stale. Like any
source it goes stale after PAYMENTS_RATE_MAX_AGE_S: an override is set again, never left to linger.
"""

import json
import os
import sys
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path

from kernodeck_payments.rates.domain import SYMBOLS


def set_rate(path: Path | None, symbol: str, usd: str, now: datetime | None = None) -> int:
    if path is None:
        print("refused: PAYMENTS_RATE_FILE is not set (payments reads no rates file)", file=sys.stderr)
        return 1
    symbol = symbol.upper()
    if symbol not in SYMBOLS:
        print(f"refused: {symbol} is not one of {', '.join(SYMBOLS)}", file=sys.stderr)
        return 1
    try:
        valid = Decimal(usd) > 0 and Decimal(usd).is_finite()
    except InvalidOperation:
        valid = False
    if not valid:
        print(f"refused: {usd!r} is not a positive decimal USD amount", file=sys.stderr)
        return 1
    rates = json.loads(path.read_text())["rates"] if path.exists() else {}
    body = {"as_of": (now or datetime.now(UTC)).isoformat(), "rates": {**rates, symbol: usd}}
    written = path.with_name(path.name + ".new")
    written.write_text(json.dumps(body, indent=2) + "\n")
    os.replace(written, path)  # payments never reads half a file
    print(f"{path}: {symbol} = {usd} USD as of {body['as_of']} (every rate in the file is as of now)")
    return 0
