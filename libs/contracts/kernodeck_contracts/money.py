"""USD at the edges is a decimal string; inside it is integer cents."""

import re

_USD = re.compile(r"(0|[1-9]\d{0,11})(?:\.(\d{1,2}))?")


def parse_usd(text: str) -> int:
    """ "1234.5" -> 123450. Refuses signs, exponents, more than two decimals."""
    match = _USD.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"not a USD amount: {text!r}")
    whole, frac = match.groups()
    return int(whole) * 100 + int((frac or "").ljust(2, "0"))


def format_usd(cents: int) -> str:
    if isinstance(cents, bool) or not isinstance(cents, int) or cents < 0:
        raise ValueError(f"not a cent amount: {cents!r}")
    return f"{cents // 100}.{cents % 100:02d}"
