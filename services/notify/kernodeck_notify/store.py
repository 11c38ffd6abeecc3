"""Notify's tables and its SQL unit (use_cases.NotifyUnit) on a kit transaction.

- `chats`: the linked chats, several per account, each with its language;
- `link_tokens`: the hashes of the deep-link tokens accounts handed out;
- `orders`: notify's own copy of its customers' orders (for /status), from orders' events;
- `deliveries`: every message to send or sent, the delivery log: one per (event or update, chat).
"""

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import BigInteger, Index, UniqueConstraint, and_, delete, func, update
from sqlmodel import Column, Field, SQLModel, select

from kernodeck_kit.outbox import Tx
from kernodeck_kit.types import UtcDateTime
from kernodeck_kit.units import SqlUnit
from kernodeck_notify.domain.deliveries import Delivery
from kernodeck_notify.domain.links import Chat, PendingLink
from kernodeck_notify.domain.orders import OPEN_STATUSES, OrderCopy

PENDING, SENT, FAILED = "pending", "sent", "failed"


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


class SqlNotify(SqlUnit):
    """Notify's unit on one kit transaction."""

    def __init__(self, tx: Tx):
        super().__init__(tx)
        self.first_delivery = tx.first_delivery

    # Link tokens

    def add_link_token(self, link: PendingLink) -> None:
        """Keep a token's hash (a hash already known is kept as it is: used or not)."""
        if self.session.get(LinkTokenRow, link.token_hash) is not None:
            return
        self.session.add(
            LinkTokenRow(
                token_hash=link.token_hash,
                account_id=link.account_id,
                language=link.language,
                expires_at=link.expires_at,
            )
        )

    def link_token(self, token_hash: str) -> PendingLink | None:
        row = self.session.get(LinkTokenRow, token_hash)
        if row is None:
            return None
        return PendingLink(row.token_hash, row.account_id, row.language, row.expires_at, row.used_at, row.used_by_chat)

    def use_link_token(self, token_hash: str, chat_id: int, now: datetime) -> None:
        self.session.execute(
            update(LinkTokenRow).where(LinkTokenRow.token_hash == token_hash).values(used_at=now, used_by_chat=chat_id)
        )

    def forget_unused_tokens(self, account_id: str) -> None:
        self.session.execute(
            delete(LinkTokenRow).where(LinkTokenRow.account_id == account_id, LinkTokenRow.used_at.is_(None))
        )

    def prune_tokens(self, expired_before: datetime) -> int:
        return self.session.execute(delete(LinkTokenRow).where(LinkTokenRow.expires_at < expired_before)).rowcount

    # Chats

    def chat(self, chat_id: int) -> Chat | None:
        row = self.session.get(ChatRow, chat_id)
        return None if row is None else _chat(row)

    def chats_of(self, account_id: str) -> list[Chat]:
        query = select(ChatRow).where(ChatRow.account_id == account_id).order_by(ChatRow.chat_id)
        return [_chat(row) for row in self.session.exec(query)]

    def link_chat(self, chat_id: int, account_id: str, language: str, now: datetime) -> None:
        self.session.merge(ChatRow(chat_id=chat_id, account_id=account_id, language=language, linked_at=now))

    def unlink_chat(self, chat_id: int) -> None:
        self.session.execute(delete(ChatRow).where(ChatRow.chat_id == chat_id))

    def set_language(self, chat_id: int, language: str) -> None:
        self.session.execute(update(ChatRow).where(ChatRow.chat_id == chat_id).values(language=language))

    def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """A group became a supergroup under a new id: its link and its waiting messages follow."""
        row = self.session.get(ChatRow, old_chat_id)
        if row is not None:
            self.session.delete(row)
            self.session.flush()
            self.session.add(
                ChatRow(chat_id=new_chat_id, account_id=row.account_id, language=row.language, linked_at=row.linked_at)
            )
        self.session.execute(
            update(DeliveryRow)
            .where(DeliveryRow.chat_id == old_chat_id, DeliveryRow.status == PENDING)
            .values(chat_id=new_chat_id)
        )

    # Orders

    def get_order(self, order_id: str) -> OrderCopy | None:
        row = self.session.get(OrderRow, order_id)
        return None if row is None else OrderCopy(row.order_id, row.account_id, row.status, row.changed_at)

    def save_order(self, order: OrderCopy) -> None:
        self.session.merge(
            OrderRow(
                order_id=order.order_id, account_id=order.account_id, status=order.status, changed_at=order.changed_at
            )
        )

    def open_orders(self, account_id: str, limit: int) -> tuple[list[OrderCopy], int]:
        """The account's open orders, newest change first (at most `limit`), and how many there are."""
        where = (OrderRow.account_id == account_id, OrderRow.status.in_(OPEN_STATUSES))
        query = select(OrderRow).where(*where).order_by(OrderRow.changed_at.desc()).limit(limit)
        orders = [
            OrderCopy(row.order_id, row.account_id, row.status, row.changed_at) for row in self.session.exec(query)
        ]
        return orders, self.session.exec(select(func.count()).select_from(OrderRow).where(*where)).one()

    # Deliveries

    def queue_message(self, delivery: Delivery) -> None:
        self.session.add(
            DeliveryRow(
                source_key=delivery.source_key,
                chat_id=delivery.chat_id,
                account_id=delivery.account_id,
                kind=delivery.kind,
                text=delivery.text,
                created_at=delivery.created_at,
            )
        )

    def due_heads(self, limit: int, excluded_chats: Collection[int] = ()) -> list[Delivery]:
        """The oldest waiting message of each chat that has none in flight, oldest first; none of `excluded_chats`."""
        waiting = DeliveryRow.status == PENDING
        if excluded_chats:
            waiting = and_(waiting, DeliveryRow.chat_id.not_in(excluded_chats))
        heads = select(func.min(DeliveryRow.id)).where(waiting).group_by(DeliveryRow.chat_id)
        query = (
            select(DeliveryRow)
            .where(DeliveryRow.id.in_(heads), DeliveryRow.sending_since.is_(None))
            .order_by(DeliveryRow.id)
            .limit(limit)
        )
        return [_delivery(row) for row in self.session.exec(query)]

    def oldest_waiting(self) -> datetime | None:
        oldest = select(func.min(DeliveryRow.id)).where(DeliveryRow.status == PENDING).scalar_subquery()
        return self.session.exec(select(DeliveryRow.created_at).where(DeliveryRow.id == oldest)).first()

    def claim(self, ids: list[int], now: datetime) -> None:
        """Mark these messages as being sent, before their requests go out."""
        self.session.execute(
            update(DeliveryRow)
            .where(DeliveryRow.id.in_(ids))
            .values(sending_since=now, attempts=DeliveryRow.attempts + 1)
        )

    def record_sent(self, delivery_id: int, message_id: int, now: datetime) -> None:
        self._finish(delivery_id, SENT, now, telegram_message_id=message_id, error=None)

    def record_failed(self, delivery_id: int, error: str, now: datetime) -> None:
        self._finish(delivery_id, FAILED, now, error=error[:200])

    def record_retry(self, delivery_id: int, error: str) -> None:
        self.session.execute(
            update(DeliveryRow).where(DeliveryRow.id == delivery_id).values(sending_since=None, error=error[:200])
        )

    def fail_waiting(self, chat_id: int, error: str, now: datetime) -> int:
        """Give up every message still waiting for `chat_id` (it blocked the bot); returns how many."""
        return self.session.execute(
            update(DeliveryRow)
            .where(DeliveryRow.chat_id == chat_id, DeliveryRow.status == PENDING)
            .values(status=FAILED, error=error, finished_at=now, sending_since=None)
        ).rowcount

    def release_in_doubt(self) -> int:
        """Messages a stopped process had in flight: they go again; returns how many."""
        return self.session.execute(
            update(DeliveryRow)
            .where(DeliveryRow.status == PENDING, DeliveryRow.sending_since.is_not(None))
            .values(sending_since=None, error="in doubt: the process stopped while sending")
        ).rowcount

    def prune(self, finished_before: datetime) -> int:
        return self.session.execute(
            delete(DeliveryRow).where(DeliveryRow.status != PENDING, DeliveryRow.finished_at < finished_before)
        ).rowcount

    def _finish(self, delivery_id: int, status: str, now: datetime, **values) -> None:
        self.session.execute(
            update(DeliveryRow)
            .where(DeliveryRow.id == delivery_id)
            .values(status=status, finished_at=now, sending_since=None, **values)
        )


def _chat(row: ChatRow) -> Chat:
    return Chat(row.chat_id, row.account_id, row.language)


def _delivery(row: DeliveryRow) -> Delivery:
    return Delivery(row.source_key, row.chat_id, row.account_id, row.kind, row.text, row.created_at, row.id)
