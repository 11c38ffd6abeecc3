"""Limits over a sliding window of past moments (addresses issued, holds expired)."""

from datetime import datetime, timedelta


def seconds_until_below(moments: list[datetime], limit: int, window: timedelta, now: datetime) -> int | None:
    """None while fewer than `limit` of `moments` (those within `window`, oldest first) stand; else the whole
    seconds, at least 1, until enough of them have left the window for one more."""
    if len(moments) < limit:
        return None
    wait = moments[len(moments) - limit] + window - now
    return max(1, -int(-wait.total_seconds() // 1))
