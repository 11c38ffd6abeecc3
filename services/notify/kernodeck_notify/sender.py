"""Delivers the queued messages: each chat's in order, under Telegram's limits, until Telegram takes them.

One message per chat is out at a time, and a chat's next message waits for
its previous one to be accepted or given up, so a chat reads its messages in
the order of their events however often they are retried. A message is
marked as being sent before its request leaves and marked with its outcome
after; whatever was out when the process stopped is sent again at start
(counted as retried, reason `in_doubt`): the one case where a chat can see
a message twice, since the Bot API has no idempotency key.
"""

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import Callable

from telegram import Bot

from kernodeck_kit.types import utcnow
from kernodeck_kit.units import Units
from kernodeck_notify import metrics, use_cases
from kernodeck_notify.database import in_thread
from kernodeck_notify.domain.deliveries import Delivery
from kernodeck_notify.domain.pacing import Pacer
from kernodeck_notify.telegram_api import Outcome, Result, send
from kernodeck_notify.use_cases import NotifyUnit

log = logging.getLogger(__name__)

IDLE_S = 5.0  # how long the dispatcher sleeps with nothing due, unless woken by new messages
LOOKAHEAD_S = 0.25  # messages are booked this long before their turn, a few per database round trip
STOP_GRACE_S = 10.0  # how long a stop waits for the requests that are out


class Sender:
    def __init__(self, units: Units[NotifyUnit], bot: Bot, pacer: Pacer, clock: Callable[[], float] = time.monotonic):
        self.units = units
        self.bot = bot
        self.pacer = pacer
        self.clock = clock
        self.batch = max(1, math.ceil(pacer.max_per_second * LOOKAHEAD_S))
        self._wakeup = asyncio.Event()
        self._out: dict[int, asyncio.Task] = {}  # chat id -> its message being sent

    def wake(self) -> None:
        """New messages are queued, or a send finished."""
        self._wakeup.set()

    async def run(self) -> None:
        """Deliver until cancelled; then wait a little for the requests that are out."""
        in_doubt = await in_thread(use_cases.release_in_doubt, self.units)
        if in_doubt:
            metrics.RETRIED.labels("in_doubt").inc(in_doubt)
            log.warning("sending again the messages that were out when the process stopped", extra={"count": in_doubt})
        try:
            while True:
                self._wakeup.clear()
                pause = await self._dispatch()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wakeup.wait(), pause)
        finally:
            if self._out:
                await asyncio.wait(list(self._out.values()), timeout=STOP_GRACE_S)

    async def _dispatch(self) -> float:
        """Book what may leave soon (each send waits for its turn); returns how long to sleep before looking again."""
        now = self.clock()
        horizon = now + LOOKAHEAD_S
        if self.pacer.wait(now) > LOOKAHEAD_S:
            return self.pacer.wait(now) - LOOKAHEAD_S
        self.pacer.forget_idle(now)
        busy = self.pacer.busy_chats(horizon)
        heads, oldest = await in_thread(use_cases.due, self.units, self.batch, {*busy, *self._out})
        metrics.OLDEST_WAITING.set((utcnow() - oldest).total_seconds() if oldest else 0)
        if not heads:
            # A busy chat's turn, unless new messages or a finished send wake the loop first.
            return min([IDLE_S, *(ready - horizon for ready in busy.values())])
        starts = [self.pacer.book(row.chat_id, self.clock()) for row in heads]
        await in_thread(use_cases.claim, self.units, heads, utcnow())
        for row, start in zip(heads, starts, strict=True):
            self._out[row.chat_id] = asyncio.create_task(self._deliver(row, start))
        return max(0.0, self.pacer.wait(self.clock()) - LOOKAHEAD_S)

    async def _deliver(self, row: Delivery, start: float) -> None:
        try:
            while (delay := max(start, self.pacer.paused_until()) - self.clock()) > 0:
                await asyncio.sleep(delay)
            outcome = await send(self.bot, row.chat_id, row.text)
            await self._record(row, outcome)
        finally:
            del self._out[row.chat_id]
            self.wake()

    async def _record(self, row: Delivery, outcome: Outcome) -> None:
        now, fields = utcnow(), {"delivery_id": row.id, "chat_id": row.chat_id, "kind": row.kind}
        match outcome.result:
            case Result.SENT:
                self.pacer.accepted(row.chat_id)
                await in_thread(use_cases.sent, self.units, row, outcome.message_id, now)
                metrics.SENT.labels(row.kind).inc()
                metrics.DELIVERY_SECONDS.observe((now - row.created_at).total_seconds())
            case Result.RATE_LIMITED | Result.UNAVAILABLE:
                if outcome.result is Result.RATE_LIMITED:
                    self.pacer.rate_limited(outcome.retry_after_s, self.clock())
                else:
                    self.pacer.unavailable(row.chat_id, self.clock())
                await in_thread(use_cases.not_sent_yet, self.units, row, outcome.error)
                metrics.RETRIED.labels(outcome.result.value).inc()
                log.warning("message not sent yet", extra={**fields, "result": outcome.result, "error": outcome.error})
            case Result.BLOCKED:
                given_up = await in_thread(use_cases.blocked, self.units, row, outcome.error, now)
                self.pacer.forget(row.chat_id)
                metrics.FAILED.labels("blocked").inc(given_up)
                log.warning("the chat blocked the bot: unlinked", extra={**fields, "given_up": given_up})
            case Result.REFUSED:
                await in_thread(use_cases.refused, self.units, row, outcome.error, now)
                metrics.FAILED.labels("refused").inc()
                log.error("Telegram refused a message", extra={**fields, "error": outcome.error})
            case Result.MIGRATED:
                await in_thread(use_cases.migrated, self.units, row, outcome.new_chat_id)
                self.pacer.forget(row.chat_id)
                log.info("the group moved to a new chat id", extra={**fields, "new_chat_id": outcome.new_chat_id})
