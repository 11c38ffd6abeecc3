"""The delivery log: one message to one chat, from its queuing to Telegram's answer."""

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Delivery:
    """`source_key` is the event id (or `update:<id>` for an answer to a command): with the chat, one message
    however often the event arrives. `id` orders a chat's messages (None until recorded)."""

    source_key: str
    chat_id: int
    account_id: str | None
    kind: str
    text: str
    created_at: datetime
    id: int | None = None
