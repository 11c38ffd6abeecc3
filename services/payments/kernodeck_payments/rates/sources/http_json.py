"""GET a JSON document with the standard library (cooperative under eventlet's patched sockets)."""

from http.client import HTTPException
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.request import Request, urlopen

from kernodeck_payments.rates.sources.base import RateSourceError, loads_exact

MAX_BODY_BYTES = 1 << 20
_HEADERS = {"Accept": "application/json", "User-Agent": "kernodeck-payments/rates"}


def get_json(url: str, timeout_s: float) -> Any:
    """The decoded body of a 200 answer; RateSourceError for anything else.

    `timeout_s` bounds the connection and each read, not the whole exchange.
    """
    try:
        with urlopen(Request(url, headers=_HEADERS), timeout=timeout_s) as response:
            body = response.read(MAX_BODY_BYTES + 1)
    except HTTPError as exc:
        exc.close()
        raise RateSourceError(f"{url}: HTTP {exc.code}", status=exc.code) from None
    except URLError as exc:
        raise RateSourceError(f"{url}: {exc.reason}") from None
    except (OSError, HTTPException) as exc:  # timeouts, resets, broken status lines
        raise RateSourceError(f"{url}: {type(exc).__name__}: {exc}") from None
    if len(body) > MAX_BODY_BYTES:
        raise RateSourceError(f"{url}: answer larger than {MAX_BODY_BYTES} bytes")
    return loads_exact(body, url)
