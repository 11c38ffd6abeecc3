"""Binding a chat to an account with a deep link's one-time token."""

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


@dataclass(frozen=True)
class PendingLink:
    """A token accounts handed out (only its hash is known here), until used or expired."""

    token_hash: str
    account_id: str
    language: str
    expires_at: datetime
    used_at: datetime | None = None
    used_by_chat: int | None = None


class StartOutcome(StrEnum):
    LINKED = "linked"
    ALREADY_LINKED = "already_linked"  # the same chat presents the token it used, and is still linked
    USED = "link_used"
    EXPIRED = "link_expired"
    UNKNOWN = "link_unknown"


def judge_start(link: PendingLink | None, chat_id: int, chat_account: str | None, now: datetime) -> StartOutcome:
    """What `/start <token>` from `chat_id` (now linked to `chat_account`, or None) does."""
    if link is None:
        return StartOutcome.UNKNOWN
    if link.used_at is not None:
        same_chat = link.used_by_chat == chat_id and chat_account == link.account_id
        return StartOutcome.ALREADY_LINKED if same_chat else StartOutcome.USED
    if now >= link.expires_at:
        return StartOutcome.EXPIRED
    return StartOutcome.LINKED


@dataclass(frozen=True)
class Chat:
    """A chat linked to an account: it hears of the account's news in its language."""

    chat_id: int
    account_id: str
    language: str
