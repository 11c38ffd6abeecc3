"""Database work from the event loop: in a thread, and tried again while the database is away."""

import asyncio
import logging

log = logging.getLogger(__name__)

RETRY_PAUSE_S = 1.0


async def in_thread(call, *args):
    """`call(*args)` off the event loop. A failure is logged and the call made again after a pause, so
    that nothing is skipped and nothing overtakes it while the database is down."""
    while True:
        try:
            return await asyncio.to_thread(call, *args)
        except Exception:
            log.exception("database work failed; trying again", extra={"call": getattr(call, "__name__", repr(call))})
            await asyncio.sleep(RETRY_PAUSE_S)
