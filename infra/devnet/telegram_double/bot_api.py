"""What the double's Bot API knows: the bot, the chats, the updates waiting, the messages accepted, the faults.

Answers are Telegram's: `{"ok": true, "result": ...}`, or `{"ok": false,
"error_code", "description"[, "parameters": {"retry_after"}]}` with the same
HTTP status. Everything here is guarded by one lock; getUpdates waits on its
condition.
"""

import threading
import time
from dataclasses import dataclass, field

MAX_TEXT = 4096


class ApiError(Exception):
    def __init__(self, status: int, description: str, retry_after: int | None = None):
        super().__init__(description)
        self.status, self.description, self.retry_after = status, description, retry_after

    def body(self) -> dict:
        body = {"ok": False, "error_code": self.status, "description": self.description}
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        return body


@dataclass(frozen=True)
class Sent:
    """A message the double accepted: `at` is time.monotonic() when it was accepted."""

    message_id: int
    chat_id: int
    text: str
    at: float


@dataclass
class Limits:
    """Telegram's documented limits, enforced with 429s as messages arrive: at most `per_second` in any
    second, one a second in a chat, one every 3 s in a group. Telegram states them as approximate; here a
    message arriving within `tolerance_s` of a limit passes, for the jitter between leaving and arriving."""

    per_second: int = 30
    chat_interval_s: float = 1.0
    group_interval_s: float = 3.0
    tolerance_s: float = 0.25
    recent: list[float] = field(default_factory=list)
    last_in_chat: dict[int, float] = field(default_factory=dict)
    violations: int = 0

    def admit(self, chat_id: int, now: float) -> None:
        window = 1.0 - self.tolerance_s
        self.recent = [at for at in self.recent if at > now - window]
        interval = (self.group_interval_s if chat_id < 0 else self.chat_interval_s) - self.tolerance_s
        too_soon = now - self.last_in_chat.get(chat_id, -interval) < interval
        if len(self.recent) >= self.per_second or too_soon:
            self.violations += 1
            raise ApiError(429, "Too Many Requests: retry after 1", retry_after=1)
        self.recent.append(now)
        self.last_in_chat[chat_id] = now


class BotApi:
    def __init__(self, token: str, username: str, bot_id: int = 7000000001):
        self.token, self.username, self.bot_id = token, username, bot_id
        self.lock = threading.Condition()
        self.updates: list[dict] = []
        self.next_update_id = 1
        self.next_message_id = 1
        self.sent: list[Sent] = []
        self.requests: dict[str, int] = {}  # Bot API calls by method, faults included
        self.started: set[int] = set()  # chats that wrote to the bot: it may write to them
        self.blocked: set[int] = set()
        self.down = False  # every call answers 502 Bad Gateway
        self.unreachable = False  # connections are refused (and those kept alive dropped)
        self.rate_limited = 0  # the next N sendMessage answer 429
        self.retry_after = 1
        self.held = 0  # the next N sendMessage are accepted, and answered only after `hold_s`
        self.hold_s = 0.0
        self.limits: Limits | None = None

    # The Bot API

    def call(self, method: str, params: dict) -> tuple[object, float]:
        """The result of `method` and how long to hold the answer back; raises ApiError."""
        with self.lock:
            self.requests[method] = self.requests.get(method, 0) + 1
            if self.down:
                raise ApiError(502, "Bad Gateway")
        if method == "getme":
            return self.me(), 0.0
        if method == "getupdates":
            return self.get_updates(params), 0.0
        if method == "sendmessage":
            return self.send_message(params)
        if method in ("deletewebhook", "setmycommands"):
            return True, 0.0
        raise ApiError(404, "Not Found")

    def me(self) -> dict:
        return {
            "id": self.bot_id,
            "is_bot": True,
            "first_name": "Kernodeck",
            "username": self.username,
            "can_join_groups": True,
            "can_read_all_group_messages": False,
            "supports_inline_queries": False,
        }

    def get_updates(self, params: dict) -> list[dict]:
        offset, timeout = int(params.get("offset") or 0), float(params.get("timeout") or 0)
        limit = min(100, int(params.get("limit") or 100))
        deadline = time.monotonic() + timeout
        with self.lock:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]  # the rest are confirmed
            while not self.updates and not self.down and (left := deadline - time.monotonic()) > 0:
                self.lock.wait(left)
            if self.down:
                raise ApiError(502, "Bad Gateway")
            return self.updates[:limit]

    def send_message(self, params: dict) -> tuple[dict, float]:
        chat_id, text = params.get("chat_id"), params.get("text")
        if chat_id is None:
            raise ApiError(400, "Bad Request: chat_id is empty")
        if not text:
            raise ApiError(400, "Bad Request: message text is empty")
        if len(text) > MAX_TEXT:
            raise ApiError(400, "Bad Request: message is too long")
        chat_id = int(chat_id)
        with self.lock:
            if self.rate_limited:
                self.rate_limited -= 1
                raise ApiError(429, f"Too Many Requests: retry after {self.retry_after}", self.retry_after)
            if chat_id in self.blocked:
                raise ApiError(403, "Forbidden: bot was blocked by the user")
            if chat_id not in self.started:
                raise ApiError(403, "Forbidden: bot can't initiate conversation with a user")
            now = time.monotonic()
            if self.limits is not None:
                self.limits.admit(chat_id, now)
            sent = Sent(self.next_message_id, chat_id, text, now)
            self.next_message_id += 1
            self.sent.append(sent)
            hold = 0.0
            if self.held:
                self.held -= 1
                hold = self.hold_s
            self.lock.notify_all()
        return _message(sent, self.me(), text), hold

    # What a test, or someone trying the bot by hand, does

    def user_says(self, chat_id: int, text: str, language_code: str = "en", first_name: str = "Lan") -> int:
        """Someone writes `text` in `chat_id` (negative: a group): an update for getUpdates."""
        with self.lock:
            update_id = self.next_update_id
            self.next_update_id += 1
            sender = {"id": abs(chat_id), "is_bot": False, "first_name": first_name, "language_code": language_code}
            chat = (
                {"id": chat_id, "type": "group", "title": "Group"}
                if chat_id < 0
                else {"id": chat_id, "type": "private", "first_name": first_name}
            )
            message = {"message_id": update_id, "date": int(time.time()), "chat": chat, "from": sender, "text": text}
            if text.startswith("/"):
                command = text.split()[0]
                message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
            self.updates.append({"update_id": update_id, "message": message})
            self.started.add(chat_id)
            self.blocked.discard(chat_id)
            self.lock.notify_all()
            return update_id

    def messages(self, chat_id: int | None = None) -> list[Sent]:
        with self.lock:
            return [m for m in self.sent if chat_id is None or m.chat_id == chat_id]

    def wait_for(self, predicate, timeout: float = 10.0) -> bool:
        """Wait until `predicate()` holds (checked whenever a message is accepted); False after `timeout`."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.lock.wait(min(left, 0.2))
            return True

    def block(self, chat_id: int) -> None:
        with self.lock:
            self.blocked.add(chat_id)

    def rate_limit(self, count: int, retry_after: int = 1) -> None:
        """The next `count` sendMessage calls answer 429 with `retry_after`."""
        with self.lock:
            self.rate_limited, self.retry_after = count, retry_after

    def set_down(self, down: bool) -> None:
        """An outage: every call answers 502 while it lasts (stop_serving() refuses connections instead)."""
        with self.lock:
            self.down = down
            self.lock.notify_all()

    def hold_answers(self, count: int, seconds: float) -> None:
        """The next `count` messages are accepted at once but answered only after `seconds`."""
        with self.lock:
            self.held, self.hold_s = count, seconds

    def enforce_limits(self, limits: Limits | None = None) -> Limits:
        with self.lock:
            self.limits = limits or Limits()
            return self.limits


def _message(sent: Sent, bot: dict, text: str) -> dict:
    chat = {"id": sent.chat_id, "type": "group" if sent.chat_id < 0 else "private"}
    return {"message_id": sent.message_id, "date": int(time.time()), "chat": chat, "from": bot, "text": text}
