"""What notify does with an event and with a chat's command, each in one transaction, once, and with Telegram's
answer to a message; on a unit of work (the database's in the process, plain objects in tests).

An event and a command record their key (the event id, the update id) with
the messages they queue, in the same transaction: a redelivered event or a
repeated update queues nothing more. The sender then delivers what is queued,
and records each outcome here.
"""

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from kernodeck_contracts.events import (
    Event,
    OrderCreated,
    OrderStatusChanged,
    TelegramLinkRequested,
    TelegramUnlinkRequested,
    telegram_token_hash,
)
from kernodeck_contracts.languages import LANGUAGES
from kernodeck_contracts.statuses import OrderStatus
from kernodeck_contracts.texts import render
from kernodeck_kit.units import Units
from kernodeck_notify.domain.commands import Command, parse_command
from kernodeck_notify.domain.deliveries import Delivery
from kernodeck_notify.domain.links import Chat, PendingLink, StartOutcome, judge_start
from kernodeck_notify.domain.notices import notice_for, order_page
from kernodeck_notify.domain.orders import OrderCopy, follow
from kernodeck_notify.templates import compose, language_of, text

# Notify applies every event of its queue as one consumer: its processed_events know them all by this key, kept
# when the kit came to know a consumer by its event's class, as the rows cannot tell which class they were.
EVENTS_CONSUMER = "notify"
UPDATES_CONSUMER = "telegram-updates"
STATUS_LINES = 10  # orders listed by /status; more are counted


class NotifyUnit(Protocol):
    def first_delivery(self, consumer: str, key: str) -> bool:
        """Record `key` for `consumer`; False when it was applied before."""

    def add_link_token(self, link: PendingLink) -> None:
        """Keep a token's hash (a hash already known is kept as it is: used or not)."""

    def link_token(self, token_hash: str) -> PendingLink | None: ...
    def use_link_token(self, token_hash: str, chat_id: int, now: datetime) -> None: ...
    def forget_unused_tokens(self, account_id: str) -> None: ...
    def prune_tokens(self, expired_before: datetime) -> int: ...

    def chat(self, chat_id: int) -> Chat | None: ...
    def chats_of(self, account_id: str) -> list[Chat]:
        """The account's chats, by chat id."""

    def link_chat(self, chat_id: int, account_id: str, language: str, now: datetime) -> None: ...
    def unlink_chat(self, chat_id: int) -> None: ...
    def set_language(self, chat_id: int, language: str) -> None: ...
    def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """The chat's link and its waiting messages move to the new id."""

    def get_order(self, order_id: str) -> OrderCopy | None: ...
    def save_order(self, order: OrderCopy) -> None: ...
    def open_orders(self, account_id: str, limit: int) -> tuple[list[OrderCopy], int]:
        """The account's open orders, newest change first (at most `limit`), and how many there are."""

    def queue_message(self, delivery: Delivery) -> None: ...
    def due_heads(self, limit: int, excluded_chats: Collection[int] = ()) -> list[Delivery]:
        """The oldest waiting message of each chat that has none in flight, oldest first; none of `excluded_chats`."""

    def oldest_waiting(self) -> datetime | None:
        """When the oldest message still waiting was queued."""

    def claim(self, ids: list[int], now: datetime) -> None:
        """Mark these messages as being sent, before their requests go out."""

    def record_sent(self, delivery_id: int, message_id: int, now: datetime) -> None: ...
    def record_failed(self, delivery_id: int, error: str, now: datetime) -> None: ...
    def record_retry(self, delivery_id: int, error: str) -> None:
        """The message waits for its next try."""

    def fail_waiting(self, chat_id: int, error: str, now: datetime) -> int:
        """Give up every message still waiting for the chat; how many."""

    def release_in_doubt(self) -> int:
        """Messages a stopped process had in flight go again; how many."""

    def prune(self, finished_before: datetime) -> int:
        """Forget the messages sent or given up before then; how many."""


@dataclass(frozen=True)
class Answer:
    kind: str
    text: str
    account_id: str | None  # the chat's account once the command is done


@dataclass(frozen=True)
class ChatMessage:
    """What a chat typed to the bot (one Telegram update)."""

    update_id: int
    chat_id: int
    text: str | None
    language_code: str | None  # the sender's Telegram language, for chats not linked yet


def apply_event(units: Units[NotifyUnit], event: Event, public_url: str, now: datetime) -> int:
    """Keep notify's copies up to date and queue the event's message to each chat of its account.

    Returns how many messages were queued (0 for a redelivery).
    """
    with units.consume(event, EVENTS_CONSUMER) as unit:
        return 0 if unit is None else _applied(unit, event, public_url, now)


def apply_events(units: Units[NotifyUnit], events: list[Event], public_url: str, now: datetime) -> int:
    """`apply_event` for each of `events` in order, in one transaction (those applied before are passed over);
    how many messages they queued."""
    with units.consume_each(events, EVENTS_CONSUMER) as (unit, fresh):
        return sum(_applied(unit, event, public_url, now) for event in fresh)


def _applied(unit: NotifyUnit, event: Event, public_url: str, now: datetime) -> int:
    if isinstance(event, TelegramLinkRequested):
        unit.add_link_token(PendingLink(event.token_hash, event.account_id, event.language, event.expires_at))
    elif isinstance(event, TelegramUnlinkRequested):
        return _unlink_account(unit, event, now)
    elif isinstance(event, OrderCreated):
        _follow_order(unit, event.order_id, event.account_id, OrderStatus.AWAITING_PAYMENT, event.occurred_at)
    elif isinstance(event, OrderStatusChanged):
        _follow_order(unit, event.order_id, event.account_id, event.status, event.occurred_at)
    notice = notice_for(event)
    if notice is None:
        return 0
    chats = unit.chats_of(notice.account_id)
    for chat in chats:
        message = compose(notice, chat.language, public_url)
        unit.queue_message(Delivery(event.event_id, chat.chat_id, chat.account_id, notice.kind, message, now))
    return len(chats)


def _follow_order(unit: NotifyUnit, order_id: str, account_id: str, status: str, at: datetime) -> None:
    changed = follow(unit.get_order(order_id), order_id, account_id, status, at)
    if changed is not None:
        unit.save_order(changed)


def _unlink_account(unit: NotifyUnit, event: TelegramUnlinkRequested, now: datetime) -> int:
    chats = unit.chats_of(event.account_id)
    for chat in chats:
        unit.unlink_chat(chat.chat_id)
        message = text(chat.language, "unlinked_by_account")
        unit.queue_message(
            Delivery(event.event_id, chat.chat_id, event.account_id, "unlinked_by_account", message, now)
        )
    unit.forget_unused_tokens(event.account_id)
    return len(chats)


def apply_chat_message(
    units: Units[NotifyUnit], message: ChatMessage, bot_username: str, public_url: str, now: datetime
) -> int:
    """Answer a command (plain text in a private chat gets the help); returns how many messages were queued."""
    with units.transaction() as unit:
        if not unit.first_delivery(UPDATES_CONSUMER, str(message.update_id)):
            return 0
        command = parse_command(message.text, bot_username)
        if command is None:
            if message.chat_id < 0 or message.text is None:
                return 0  # in a group, only commands addressed to the bot get an answer
            command = Command("help")
        chat = unit.chat(message.chat_id)
        language = chat.language if chat else language_of(message.language_code)
        answer = _answer(unit, command, message.chat_id, chat, language, public_url, now)
        key = f"update:{message.update_id}"
        unit.queue_message(Delivery(key, message.chat_id, answer.account_id, f"reply:{answer.kind}", answer.text, now))
        return 1


def _answer(
    unit: NotifyUnit,
    command: Command,
    chat_id: int,
    chat: Chat | None,
    language: str,
    public_url: str,
    now: datetime,
) -> Answer:
    account_id = chat.account_id if chat else None
    if command.name == "start":
        return _start(unit, command, chat_id, chat, language, now)
    if command.name in ("status", "unlink", "language") and chat is None:
        return Answer("not_linked", text(language, "not_linked"), None)
    if command.name == "status":
        return Answer("status", _status(unit, chat.account_id, language, public_url), account_id)
    if command.name == "unlink":
        unit.unlink_chat(chat_id)
        return Answer("unlinked", text(language, "unlinked"), None)
    if command.name == "language":
        chosen = command.args[0].lower() if command.args else ""
        if chosen not in LANGUAGES:
            return Answer("language_usage", text(language, "language_usage"), account_id)
        unit.set_language(chat_id, chosen)
        return Answer("language_set", text(chosen, "language_set"), account_id)
    return Answer("help", text(language, "help"), account_id)


def _start(unit: NotifyUnit, command: Command, chat_id: int, chat: Chat | None, language: str, now: datetime) -> Answer:
    account_id = chat.account_id if chat else None
    if not command.args:
        kind = "already_linked" if chat else "start_without_token"
        return Answer(kind, text(language, kind), account_id)
    token_hash = telegram_token_hash(command.args[0])
    link = unit.link_token(token_hash)
    outcome = judge_start(link, chat_id, account_id, now)
    if outcome is StartOutcome.LINKED:
        unit.use_link_token(token_hash, chat_id, now)
        unit.link_chat(chat_id, link.account_id, link.language, now)
        return Answer(outcome.value, text(link.language, outcome.value), link.account_id)
    return Answer(outcome.value, text(language, outcome.value), account_id)


def _status(unit: NotifyUnit, account_id: str, language: str, public_url: str) -> str:
    orders, count = unit.open_orders(account_id, STATUS_LINES)
    if not orders:
        return text(language, "status_empty")
    lines = [text(language, "status_header")]
    for order in orders:
        status = render(language, f"status.{order.status}")
        url = public_url + order_page(order.order_id)
        lines.append(text(language, "status_line", order_id=order.order_id, status=status, url=url))
    if count > len(orders):
        lines.append(text(language, "status_more", count=count - len(orders)))
    return "\n".join(lines)


# --- the sender's work: what is due, and what Telegram answered -------------------------------


def release_in_doubt(units: Units[NotifyUnit]) -> int:
    """At start: the messages that were out when the process stopped go again; how many."""
    with units.transaction() as unit:
        return unit.release_in_doubt()


def due(
    units: Units[NotifyUnit], limit: int, excluded_chats: Collection[int]
) -> tuple[list[Delivery], datetime | None]:
    """The next message of each chat that may have one out (none of `excluded_chats`), and when the oldest still
    waiting was queued."""
    with units.transaction() as unit:
        return unit.due_heads(limit, excluded_chats), unit.oldest_waiting()


def claim(units: Units[NotifyUnit], deliveries: list[Delivery], now: datetime) -> None:
    with units.transaction() as unit:
        unit.claim([delivery.id for delivery in deliveries], now)


def sent(units: Units[NotifyUnit], delivery: Delivery, message_id: int, now: datetime) -> None:
    with units.transaction() as unit:
        unit.record_sent(delivery.id, message_id, now)


def not_sent_yet(units: Units[NotifyUnit], delivery: Delivery, error: str) -> None:
    with units.transaction() as unit:
        unit.record_retry(delivery.id, error)


def refused(units: Units[NotifyUnit], delivery: Delivery, error: str, now: datetime) -> None:
    with units.transaction() as unit:
        unit.record_failed(delivery.id, error, now)


def blocked(units: Units[NotifyUnit], delivery: Delivery, error: str, now: datetime) -> int:
    """The chat blocked the bot: unlink it and give up what waits for it; returns how many messages."""
    with units.transaction() as unit:
        unit.unlink_chat(delivery.chat_id)
        return unit.fail_waiting(delivery.chat_id, f"blocked: {error}", now)


def migrated(units: Units[NotifyUnit], delivery: Delivery, new_chat_id: int) -> None:
    """The group moved to a new chat id: the message waits to go there, with the others."""
    with units.transaction() as unit:
        unit.record_retry(delivery.id, "the group moved to a new chat id")
        unit.migrate_chat(delivery.chat_id, new_chat_id)


def prune(units: Units[NotifyUnit], now: datetime, kept: timedelta, tokens_kept: timedelta) -> int:
    """Forget the messages finished more than `kept` ago and the link tokens expired more than `tokens_kept` ago;
    how many messages."""
    with units.transaction() as unit:
        pruned = unit.prune(now - kept)
    with units.transaction() as unit:
        unit.prune_tokens(now - tokens_kept)
    return pruned
