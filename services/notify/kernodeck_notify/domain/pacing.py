"""When the next message may leave: Telegram's limits, its `retry_after`, and back-off while it is down.

Times are monotonic seconds, given by the caller. Telegram documents about 30
messages a second to different chats, one a second in a chat, and 20 a
minute in a group (groups have negative chat ids). Telegram counts messages
as they reach it: a burst of 30 sent at once arrives spread out, and the next
second's burst would overlap it there, so messages leave evenly spaced (one
every 1/30 s) as well as at most 30 in any second. Its 429 answer says how
long to wait; it cannot tell which limit was hit, so the whole sender waits.
"""

from collections import deque
from dataclasses import dataclass, field


@dataclass
class Pacer:
    max_per_second: int
    chat_interval_s: float
    group_interval_s: float
    retry_first_s: float
    retry_max_s: float
    _started: deque = field(default_factory=deque)  # start times of the sends of the last second
    _chat_ready: dict[int, float] = field(default_factory=dict)
    _chat_failures: dict[int, int] = field(default_factory=dict)
    _paused_until: float = 0.0
    _failures: int = 0  # consecutive failures of the API as a whole

    def backoff(self, failures: int) -> float:
        """Doubling from `retry_first_s`, never above `retry_max_s`: a message is retried until Telegram takes it."""
        return min(self.retry_max_s, self.retry_first_s * 2 ** min(failures - 1, 32))

    def wait(self, now: float) -> float:
        """Seconds before the next message may leave (0: now)."""
        return max(0.0, self._next_start(now) - now)

    def paused_until(self) -> float:
        return self._paused_until

    def busy_chats(self, moment: float) -> dict[int, float]:
        """The chats whose next message may not leave by `moment`, with when it may."""
        return {chat: ready for chat, ready in self._chat_ready.items() if ready > moment}

    def book(self, chat_id: int, now: float) -> float:
        """Book the next message to `chat_id`: returns when it may leave (bookings come in that order)."""
        start = max(self._next_start(now), self._chat_ready.get(chat_id, 0.0))
        self._started.append(start)
        interval = self.group_interval_s if chat_id < 0 else self.chat_interval_s
        self._chat_ready[chat_id] = start + interval
        return start

    def _next_start(self, now: float) -> float:
        while self._started and self._started[0] <= now - 1.0:
            self._started.popleft()
        start = max(now, self._paused_until)
        if self._started:
            start = max(start, self._started[-1] + 1.0 / self.max_per_second)
        if len(self._started) >= self.max_per_second:
            start = max(start, self._started[-self.max_per_second] + 1.0)
        return start

    def accepted(self, chat_id: int) -> None:
        self._failures = 0
        self._chat_failures.pop(chat_id, None)

    def rate_limited(self, retry_after_s: float, now: float) -> None:
        self._paused_until = max(self._paused_until, now + retry_after_s)

    def unavailable(self, chat_id: int, now: float) -> None:
        """The Bot API did not answer (or answered 5xx): back off, the whole sender and this chat."""
        self._failures += 1
        self._chat_failures[chat_id] = self._chat_failures.get(chat_id, 0) + 1
        self._paused_until = max(self._paused_until, now + self.backoff(self._failures))
        chat_ready = now + self.backoff(self._chat_failures[chat_id])
        self._chat_ready[chat_id] = max(self._chat_ready.get(chat_id, 0.0), chat_ready)

    def forget_idle(self, now: float) -> None:
        """Drop what is known of chats free again (one entry per busy chat is all that is kept)."""
        self._chat_ready = {chat: ready for chat, ready in self._chat_ready.items() if ready > now}

    def forget(self, chat_id: int) -> None:
        self._chat_ready.pop(chat_id, None)
        self._chat_failures.pop(chat_id, None)
