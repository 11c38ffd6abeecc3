"""Notify's tables and the queries it needs.

- `chats`: the linked chats, several per account, each with its language;
- `link_tokens`: the hashes of the deep-link tokens accounts handed out;
- `orders`: notify's own copy of its customers' orders (for /status), from orders' events;
- `deliveries`: every message to send or sent, the delivery log: one per (event or update, chat).
"""

from collections.abc import Collection, Sequence
from datetime import datetime

from sqlalchemy import BigInteger, Index, UniqueConstraint, and_, delete, func, update
from sqlmodel import Column, Field, Session, SQLModel, select

from kernodeck_kit.types import UtcDateTime
from kernodeck_notify.domain.links import PendingLink

PENDING, SENT, FAILED = "pending", "sent", "failed"
OPEN_ORDER_STATUSES = ("awaiting_payment", "paid", "provisioning", "ready")


class ChatRow(SQLModel, table=True):
    __tablename__ = "chats"

    chat_id: int = Field(sa_column=Column(BigInteger, primary_key=True, autoincrement=False))
    account_id: str = Field(max_length=64, index=True)
    language: str = Field(max_length=8)
    linked_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class LinkTokenRow(SQLModel, table=True):
    """Only the token's SHA-256 travels and is kept: a copy of this table links no chat."""

    __tablename__ = "link_tokens"

    token_hash: str = Field(primary_key=True, max_length=64)
    account_id: str = Field(max_length=64, index=True)
    language: str = Field(max_length=8)
    expires_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    used_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    used_by_chat: int | None = Field(default=None, sa_column=Column(BigInteger))


class OrderRow(SQLModel, table=True):
    __tablename__ = "orders"

    order_id: str = Field(primary_key=True, max_length=64)
    account_id: str = Field(max_length=64, index=True)
    status: str = Field(max_length=32)
    changed_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class DeliveryRow(SQLModel, table=True):
    """One message to one chat, from its queuing to Telegram's answer.

    `source_key` is the event id (or `update:<id>` for an answer to a command); with the chat it
    is unique, so an event queues one message per chat however often it arrives. `sending_since`
    is set while the request is out: a row found with it at start was in flight when the process
    stopped, and is sent again (the only way a chat may see a message twice).
    """

    __tablename__ = "deliveries"
    __table_args__ = (
        UniqueConstraint("source_key", "chat_id", name="uq_deliveries_source_chat"),
        Index("ix_deliveries_status_chat_id", "status", "chat_id", "id"),
        Index("ix_deliveries_finished_at", "finished_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    source_key: str = Field(max_length=80)
    chat_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    account_id: str | None = Field(default=None, max_length=64)
    kind: str = Field(max_length=64)
    text: str
    status: str = Field(default=PENDING, max_length=16)
    attempts: int = 0
    created_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    sending_since: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    finished_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))
    telegram_message_id: int | None = Field(default=None, sa_column=Column(BigInteger))
    error: str | None = Field(default=None, max_length=200)


# Link tokens


def add_link_token(session: Session, link: PendingLink) -> None:
    """Keep a token's hash (a hash already known is kept as it is: used or not)."""
    if session.get(LinkTokenRow, link.token_hash) is not None:
        return
    session.add(
        LinkTokenRow(
            token_hash=link.token_hash,
            account_id=link.account_id,
            language=link.language,
            expires_at=link.expires_at,
        )
    )


def link_token(session: Session, token_hash: str) -> PendingLink | None:
    row = session.get(LinkTokenRow, token_hash)
    if row is None:
        return None
    return PendingLink(row.token_hash, row.account_id, row.language, row.expires_at, row.used_at, row.used_by_chat)


def use_link_token(session: Session, token_hash: str, chat_id: int, now: datetime) -> None:
    session.execute(
        update(LinkTokenRow).where(LinkTokenRow.token_hash == token_hash).values(used_at=now, used_by_chat=chat_id)
    )


def forget_unused_tokens(session: Session, account_id: str) -> None:
    session.execute(delete(LinkTokenRow).where(LinkTokenRow.account_id == account_id, LinkTokenRow.used_at.is_(None)))


def prune_tokens(session: Session, expired_before: datetime) -> int:
    return session.execute(delete(LinkTokenRow).where(LinkTokenRow.expires_at < expired_before)).rowcount


# Chats


def chat(session: Session, chat_id: int) -> ChatRow | None:
    return session.get(ChatRow, chat_id)


def chats_of(session: Session, account_id: str) -> Sequence[ChatRow]:
    return session.exec(select(ChatRow).where(ChatRow.account_id == account_id).order_by(ChatRow.chat_id)).all()


def link_chat(session: Session, chat_id: int, account_id: str, language: str, now: datetime) -> None:
    session.merge(ChatRow(chat_id=chat_id, account_id=account_id, language=language, linked_at=now))


def unlink_chat(session: Session, chat_id: int) -> None:
    session.execute(delete(ChatRow).where(ChatRow.chat_id == chat_id))


def set_language(session: Session, chat_id: int, language: str) -> None:
    session.execute(update(ChatRow).where(ChatRow.chat_id == chat_id).values(language=language))


def migrate_chat(session: Session, old_chat_id: int, new_chat_id: int) -> None:
    """A group became a supergroup under a new id: its link and its waiting messages follow."""
    row = session.get(ChatRow, old_chat_id)
    if row is not None:
        session.delete(row)
        session.flush()
        session.add(
            ChatRow(chat_id=new_chat_id, account_id=row.account_id, language=row.language, linked_at=row.linked_at)
        )
    session.execute(
        update(DeliveryRow)
        .where(DeliveryRow.chat_id == old_chat_id, DeliveryRow.status == PENDING)
        .values(chat_id=new_chat_id)
    )


# Orders


def save_order_status(session: Session, order_id: str, account_id: str, status: str, at: datetime) -> None:
    """Keep the status of the latest change (events may come out of order)."""
    row = session.get(OrderRow, order_id)
    if row is None:
        session.add(OrderRow(order_id=order_id, account_id=account_id, status=status, changed_at=at))
    elif at >= row.changed_at:
        row.status, row.changed_at = status, at
        session.add(row)


def open_orders(session: Session, account_id: str, limit: int) -> tuple[Sequence[OrderRow], int]:
    """The account's open orders, newest change first (at most `limit`), and how many there are."""
    where = (OrderRow.account_id == account_id, OrderRow.status.in_(OPEN_ORDER_STATUSES))
    rows = session.exec(select(OrderRow).where(*where).order_by(OrderRow.changed_at.desc()).limit(limit)).all()
    count = session.exec(select(func.count()).select_from(OrderRow).where(*where)).one()
    return rows, count


# Deliveries


def queue_message(
    session: Session, source_key: str, chat_id: int, account_id: str | None, kind: str, text: str, now: datetime
) -> None:
    session.add(
        DeliveryRow(source_key=source_key, chat_id=chat_id, account_id=account_id, kind=kind, text=text, created_at=now)
    )


def due_heads(session: Session, limit: int, excluded_chats: Collection[int] = ()) -> Sequence[DeliveryRow]:
    """The oldest waiting message of each chat that has none in flight, oldest first; none of `excluded_chats`."""
    waiting = DeliveryRow.status == PENDING
    if excluded_chats:
        waiting = and_(waiting, DeliveryRow.chat_id.not_in(excluded_chats))
    heads = select(func.min(DeliveryRow.id)).where(waiting).group_by(DeliveryRow.chat_id)
    return session.exec(
        select(DeliveryRow)
        .where(DeliveryRow.id.in_(heads), DeliveryRow.sending_since.is_(None))
        .order_by(DeliveryRow.id)
        .limit(limit)
    ).all()


def oldest_waiting(session: Session) -> datetime | None:
    oldest = select(func.min(DeliveryRow.id)).where(DeliveryRow.status == PENDING).scalar_subquery()
    return session.exec(select(DeliveryRow.created_at).where(DeliveryRow.id == oldest)).first()


def claim(session: Session, ids: Sequence[int], now: datetime) -> None:
    """Mark these messages as being sent, before their requests go out."""
    session.execute(
        update(DeliveryRow).where(DeliveryRow.id.in_(ids)).values(sending_since=now, attempts=DeliveryRow.attempts + 1)
    )


def record_sent(session: Session, delivery_id: int, message_id: int, now: datetime) -> None:
    _finish(session, delivery_id, SENT, now, telegram_message_id=message_id, error=None)


def record_failed(session: Session, delivery_id: int, error: str, now: datetime) -> None:
    _finish(session, delivery_id, FAILED, now, error=error[:200])


def record_retry(session: Session, delivery_id: int, error: str) -> None:
    session.execute(
        update(DeliveryRow).where(DeliveryRow.id == delivery_id).values(sending_since=None, error=error[:200])
    )


def fail_waiting(session: Session, chat_id: int, error: str, now: datetime) -> int:
    """Give up every message still waiting for `chat_id` (it blocked the bot); returns how many."""
    return session.execute(
        update(DeliveryRow)
        .where(DeliveryRow.chat_id == chat_id, DeliveryRow.status == PENDING)
        .values(status=FAILED, error=error, finished_at=now, sending_since=None)
    ).rowcount


def release_in_doubt(session: Session) -> int:
    """Messages a stopped process had in flight: they go again; returns how many."""
    return session.execute(
        update(DeliveryRow)
        .where(DeliveryRow.status == PENDING, DeliveryRow.sending_since.is_not(None))
        .values(sending_since=None, error="in doubt: the process stopped while sending")
    ).rowcount


def prune(session: Session, finished_before: datetime) -> int:
    return session.execute(
        delete(DeliveryRow).where(DeliveryRow.status != PENDING, DeliveryRow.finished_at < finished_before)
    ).rowcount


def _finish(session: Session, delivery_id: int, status: str, now: datetime, **values) -> None:
    session.execute(
        update(DeliveryRow)
        .where(DeliveryRow.id == delivery_id)
        .values(status=status, finished_at=now, sending_since=None, **values)
    )
