"""Telegram deep links: a one-time token per request, kept here only as its hash, announced to notify.

Notify binds the chat that presents the token before it expires. Accounts
keeps the hashes to limit how many links an account asks for (each one is
an event and a pending token in notify).
"""

import secrets
from datetime import datetime, timedelta

from pydantic import BaseModel, Field, field_validator
from sqlalchemy import delete, func
from sqlmodel import Column, Session, SQLModel, select
from sqlmodel import Field as TableField

from kernodeck_accounts.domain import ThrottleRule
from kernodeck_accounts.store import AccountRow
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import TelegramLinkRequested, TelegramUnlinkRequested, telegram_token_hash
from kernodeck_contracts.languages import LANGUAGES
from kernodeck_kit.db import is_postgres
from kernodeck_kit.outbox import Store
from kernodeck_kit.types import UtcDateTime

_USERNAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


class TelegramLinkPolicy(BaseModel):
    # The bot's @username (from @BotFather); empty: Telegram links are not offered (503).
    telegram_bot_username: str = ""
    telegram_link_ttl_s: int = Field(15 * 60, ge=60, le=24 * 3600)
    telegram_link_limit: int = Field(10, ge=1)
    telegram_link_window_s: int = Field(3600, ge=60)

    @field_validator("telegram_bot_username")
    @classmethod
    def _username(cls, value: str) -> str:
        value = value.removeprefix("@")
        if value and not (5 <= len(value) <= 32 and set(value) <= _USERNAME_CHARS and value.lower().endswith("bot")):
            raise ValueError("a bot's username has 5 to 32 letters, digits or _ and ends with 'bot'")
        return value

    @property
    def telegram_link_throttle(self) -> ThrottleRule:
        return ThrottleRule(self.telegram_link_limit, timedelta(seconds=self.telegram_link_window_s))


class TelegramLinkRow(SQLModel, table=True):
    __tablename__ = "telegram_link_tokens"

    token_hash: str = TableField(primary_key=True, max_length=64)
    account_id: str = TableField(foreign_key="accounts.id", max_length=32, index=True)
    created_at: datetime = TableField(sa_column=Column(UtcDateTime(), nullable=False))
    expires_at: datetime = TableField(sa_column=Column(UtcDateTime(), nullable=False))


def deep_link(bot_username: str, token: str) -> str:
    return f"https://t.me/{bot_username}?start={token}"


def create(db: Store, policy: TelegramLinkPolicy, account_id, language, now: datetime) -> dict:
    """A new one-time deep link for `account_id`, greeting in `language`."""
    if not policy.telegram_bot_username:
        raise ServiceError(ErrorCode.SERVICE_UNAVAILABLE, "Telegram notifications are not set up here")
    if language not in LANGUAGES:
        raise ServiceError.field("language", f"must be one of {', '.join(LANGUAGES)}")
    token = secrets.token_urlsafe(32)
    expires_at = now + timedelta(seconds=policy.telegram_link_ttl_s)
    with db.transaction() as tx:
        if not isinstance(account_id, str) or tx.session.get(AccountRow, account_id) is None:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such account")
        _lock_account(tx.session, account_id)
        recent = tx.session.exec(
            select(TelegramLinkRow.created_at).where(
                TelegramLinkRow.account_id == account_id,
                TelegramLinkRow.created_at > now - policy.telegram_link_throttle.window,
            )
        ).all()
        wait = policy.telegram_link_throttle.retry_after(recent, now)
        if wait:
            raise ServiceError(ErrorCode.TOO_MANY_REQUESTS, "too many Telegram links asked for", retry_after=wait)
        token_hash = telegram_token_hash(token)
        tx.session.add(
            TelegramLinkRow(token_hash=token_hash, account_id=account_id, created_at=now, expires_at=expires_at)
        )
        tx.emit(
            TelegramLinkRequested(
                account_id=account_id, token_hash=token_hash, expires_at=expires_at, language=language
            )
        )
    return {"url": deep_link(policy.telegram_bot_username, token), "expires_at": expires_at.isoformat()}


def unlink(db: Store, account_id: str) -> None:
    """Every chat linked to the account stops receiving (notify tells each one)."""
    with db.transaction() as tx:
        tx.emit(TelegramUnlinkRequested(account_id=account_id))


def purge(session: Session, created_before: datetime, now: datetime) -> None:
    """Drop the hashes that neither link nor count any more."""
    session.execute(
        delete(TelegramLinkRow).where(TelegramLinkRow.created_at <= created_before, TelegramLinkRow.expires_at <= now)
    )


def _lock_account(session: Session, account_id: str) -> None:
    """Parallel requests of one account count each other (SQLite's transactions are one writer at a time)."""
    if is_postgres(session.get_bind()):
        session.execute(select(func.pg_advisory_xact_lock(3, func.hashtext(account_id))))
