"""Notify's unit of work on plain objects (kernodeck_kit.memory): its use cases run here without a database,
with the same answers as the SQL unit."""

from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import datetime

from kernodeck_kit.memory import MemoryUnit
from kernodeck_kit.units import MemoryUnits
from kernodeck_notify.domain.deliveries import Delivery
from kernodeck_notify.domain.links import Chat, PendingLink
from kernodeck_notify.domain.orders import OPEN_STATUSES, OrderCopy
from kernodeck_notify.store import FAILED, PENDING, SENT


@dataclass
class Logged:
    """A message in the delivery log, with where it stands."""

    delivery: Delivery
    status: str = PENDING
    attempts: int = 0
    sending_since: datetime | None = None
    finished_at: datetime | None = None
    telegram_message_id: int | None = None
    error: str | None = None


@dataclass
class NotifyTables:
    tokens: dict[str, PendingLink] = field(default_factory=dict)
    chats: dict[int, Chat] = field(default_factory=dict)
    orders: dict[str, OrderCopy] = field(default_factory=dict)
    deliveries: dict[int, Logged] = field(default_factory=dict)  # by id, in the order they were queued
    applied: set[tuple[str, str]] = field(default_factory=set)  # (consumer, key)


class MemoryNotify(MemoryUnit[NotifyTables]):
    def first_delivery(self, consumer: str, key: str) -> bool:
        if (consumer, key) in self.tables.applied:
            return False
        self.tables.applied.add((consumer, key))
        return True

    def add_link_token(self, link: PendingLink) -> None:
        self.tables.tokens.setdefault(link.token_hash, link)

    def link_token(self, token_hash: str) -> PendingLink | None:
        return self.tables.tokens.get(token_hash)

    def use_link_token(self, token_hash: str, chat_id: int, now: datetime) -> None:
        self.tables.tokens[token_hash] = replace(self.tables.tokens[token_hash], used_at=now, used_by_chat=chat_id)

    def forget_unused_tokens(self, account_id: str) -> None:
        for token_hash, link in list(self.tables.tokens.items()):
            if link.account_id == account_id and link.used_at is None:
                del self.tables.tokens[token_hash]

    def prune_tokens(self, expired_before: datetime) -> int:
        expired = [h for h, link in self.tables.tokens.items() if link.expires_at < expired_before]
        for token_hash in expired:
            del self.tables.tokens[token_hash]
        return len(expired)

    def chat(self, chat_id: int) -> Chat | None:
        return self.tables.chats.get(chat_id)

    def chats_of(self, account_id: str) -> list[Chat]:
        return sorted((c for c in self.tables.chats.values() if c.account_id == account_id), key=lambda c: c.chat_id)

    def link_chat(self, chat_id: int, account_id: str, language: str, now: datetime) -> None:
        self.tables.chats[chat_id] = Chat(chat_id, account_id, language)

    def unlink_chat(self, chat_id: int) -> None:
        self.tables.chats.pop(chat_id, None)

    def set_language(self, chat_id: int, language: str) -> None:
        if chat_id in self.tables.chats:
            self.tables.chats[chat_id] = replace(self.tables.chats[chat_id], language=language)

    def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        chat = self.tables.chats.pop(old_chat_id, None)
        if chat is not None:
            self.tables.chats[new_chat_id] = replace(chat, chat_id=new_chat_id)
        for logged in self._waiting(old_chat_id):
            logged.delivery = replace(logged.delivery, chat_id=new_chat_id)

    def get_order(self, order_id: str) -> OrderCopy | None:
        return self.tables.orders.get(order_id)

    def save_order(self, order: OrderCopy) -> None:
        self.tables.orders[order.order_id] = order

    def open_orders(self, account_id: str, limit: int) -> tuple[list[OrderCopy], int]:
        found = [o for o in self.tables.orders.values() if o.account_id == account_id and o.status in OPEN_STATUSES]
        return sorted(found, key=lambda o: o.changed_at, reverse=True)[:limit], len(found)

    def queue_message(self, delivery: Delivery) -> None:
        delivery_id = max(self.tables.deliveries, default=0) + 1
        self.tables.deliveries[delivery_id] = Logged(replace(delivery, id=delivery_id))

    def due_heads(self, limit: int, excluded_chats: Collection[int] = ()) -> list[Delivery]:
        heads: dict[int, Logged] = {}
        for logged in self.tables.deliveries.values():
            if logged.status == PENDING and logged.delivery.chat_id not in excluded_chats:
                heads.setdefault(logged.delivery.chat_id, logged)
        return [logged.delivery for logged in heads.values() if logged.sending_since is None][:limit]

    def oldest_waiting(self) -> datetime | None:
        waiting = [logged for logged in self.tables.deliveries.values() if logged.status == PENDING]
        return waiting[0].delivery.created_at if waiting else None

    def claim(self, ids: list[int], now: datetime) -> None:
        for delivery_id in ids:
            logged = self.tables.deliveries[delivery_id]
            logged.sending_since, logged.attempts = now, logged.attempts + 1

    def record_sent(self, delivery_id: int, message_id: int, now: datetime) -> None:
        self._finish(delivery_id, SENT, now, None)
        self.tables.deliveries[delivery_id].telegram_message_id = message_id

    def record_failed(self, delivery_id: int, error: str, now: datetime) -> None:
        self._finish(delivery_id, FAILED, now, error[:200])

    def record_retry(self, delivery_id: int, error: str) -> None:
        logged = self.tables.deliveries[delivery_id]
        logged.sending_since, logged.error = None, error[:200]

    def fail_waiting(self, chat_id: int, error: str, now: datetime) -> int:
        waiting = self._waiting(chat_id)
        for logged in waiting:
            logged.status, logged.error, logged.finished_at, logged.sending_since = FAILED, error, now, None
        return len(waiting)

    def release_in_doubt(self) -> int:
        in_doubt = [d for d in self.tables.deliveries.values() if d.status == PENDING and d.sending_since]
        for logged in in_doubt:
            logged.sending_since, logged.error = None, "in doubt: the process stopped while sending"
        return len(in_doubt)

    def prune(self, finished_before: datetime) -> int:
        done = [
            delivery_id
            for delivery_id, logged in self.tables.deliveries.items()
            if logged.status != PENDING and logged.finished_at < finished_before
        ]
        for delivery_id in done:
            del self.tables.deliveries[delivery_id]
        return len(done)

    def _waiting(self, chat_id: int) -> list[Logged]:
        return [d for d in self.tables.deliveries.values() if d.delivery.chat_id == chat_id and d.status == PENDING]

    def _finish(self, delivery_id: int, status: str, now: datetime, error: str | None) -> None:
        logged = self.tables.deliveries[delivery_id]
        logged.status, logged.finished_at, logged.sending_since, logged.error = status, now, None, error


def memory_units() -> MemoryUnits:
    return MemoryUnits("notify", NotifyTables(), MemoryNotify)
