"""What notify does with an event and with a chat's command: each in one transaction, once.

Both record their key (the event id, the update id) with the messages they
queue, in the same transaction: a redelivered event or a repeated update
queues nothing more. The sender then delivers what is queued.
"""

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from kernodeck_contracts.events import (
    Event,
    OrderCreated,
    OrderStatusChanged,
    TelegramLinkRequested,
    TelegramUnlinkRequested,
    telegram_token_hash,
)
from kernodeck_contracts.languages import LANGUAGES
from kernodeck_contracts.texts import render
from kernodeck_kit.outbox import Store
from kernodeck_notify import store
from kernodeck_notify.domain.commands import Command, parse_command
from kernodeck_notify.domain.links import PendingLink, StartOutcome, judge_start
from kernodeck_notify.domain.notices import notice_for, order_page
from kernodeck_notify.templates import compose, language_of, text

EVENTS_CONSUMER = "notify"
UPDATES_CONSUMER = "telegram-updates"
STATUS_LINES = 10  # orders listed by /status; more are counted


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


def apply_event(db: Store, event: Event, public_url: str, now: datetime) -> int:
    """Keep notify's copies up to date and queue the event's message to each chat of its account.

    Returns how many messages were queued (0 for a redelivery).
    """
    with db.consume(EVENTS_CONSUMER, event) as tx:
        return 0 if tx is None else _applied(tx.session, event, public_url, now)


def apply_events(db: Store, events: list[Event], public_url: str, now: datetime) -> int:
    """`apply_event` for each of `events` in order, in one transaction (those applied before are passed over);
    how many messages they queued."""
    with db.consume_each(EVENTS_CONSUMER, events) as (tx, fresh):
        return sum(_applied(tx.session, event, public_url, now) for event in fresh)


def _applied(session: Session, event: Event, public_url: str, now: datetime) -> int:
    if isinstance(event, TelegramLinkRequested):
        link = PendingLink(event.token_hash, event.account_id, event.language, event.expires_at)
        store.add_link_token(session, link)
    elif isinstance(event, TelegramUnlinkRequested):
        return _unlink_account(session, event, public_url, now)
    elif isinstance(event, OrderCreated):
        store.save_order_status(session, event.order_id, event.account_id, "awaiting_payment", event.occurred_at)
    elif isinstance(event, OrderStatusChanged):
        store.save_order_status(session, event.order_id, event.account_id, event.status, event.occurred_at)
    notice = notice_for(event)
    if notice is None:
        return 0
    chats = store.chats_of(session, notice.account_id)
    for chat in chats:
        message = compose(notice, chat.language, public_url)
        store.queue_message(session, event.event_id, chat.chat_id, chat.account_id, notice.kind, message, now)
    return len(chats)


def _unlink_account(session: Session, event: TelegramUnlinkRequested, public_url: str, now: datetime) -> int:
    chats = store.chats_of(session, event.account_id)
    for chat in chats:
        store.unlink_chat(session, chat.chat_id)
        message = text(chat.language, "unlinked_by_account")
        store.queue_message(
            session, event.event_id, chat.chat_id, event.account_id, "unlinked_by_account", message, now
        )
    store.forget_unused_tokens(session, event.account_id)
    return len(chats)


def apply_chat_message(db: Store, message: ChatMessage, bot_username: str, public_url: str, now: datetime) -> int:
    """Answer a command (plain text in a private chat gets the help); returns how many messages were queued."""
    with db.transaction() as tx:
        if not tx.first_delivery(UPDATES_CONSUMER, str(message.update_id)):
            return 0
        session = tx.session
        command = parse_command(message.text, bot_username)
        if command is None:
            if message.chat_id < 0 or message.text is None:
                return 0  # in a group, only commands addressed to the bot get an answer
            command = Command("help")
        chat = store.chat(session, message.chat_id)
        language = chat.language if chat else language_of(message.language_code)
        answer = _answer(session, command, message.chat_id, chat, language, public_url, now)
        key = f"update:{message.update_id}"
        store.queue_message(session, key, message.chat_id, answer.account_id, f"reply:{answer.kind}", answer.text, now)
        return 1


def _answer(
    session: Session,
    command: Command,
    chat_id: int,
    chat: store.ChatRow | None,
    language: str,
    public_url: str,
    now: datetime,
) -> Answer:
    account_id = chat.account_id if chat else None
    if command.name == "start":
        return _start(session, command, chat_id, chat, language, now)
    if command.name in ("status", "unlink", "language") and chat is None:
        return Answer("not_linked", text(language, "not_linked"), None)
    if command.name == "status":
        return Answer("status", _status(session, chat.account_id, language, public_url), account_id)
    if command.name == "unlink":
        store.unlink_chat(session, chat_id)
        return Answer("unlinked", text(language, "unlinked"), None)
    if command.name == "language":
        chosen = command.args[0].lower() if command.args else ""
        if chosen not in LANGUAGES:
            return Answer("language_usage", text(language, "language_usage"), account_id)
        store.set_language(session, chat_id, chosen)
        return Answer("language_set", text(chosen, "language_set"), account_id)
    return Answer("help", text(language, "help"), account_id)


def _start(
    session: Session, command: Command, chat_id: int, chat: store.ChatRow | None, language: str, now: datetime
) -> Answer:
    account_id = chat.account_id if chat else None
    if not command.args:
        kind = "already_linked" if chat else "start_without_token"
        return Answer(kind, text(language, kind), account_id)
    token_hash = telegram_token_hash(command.args[0])
    link = store.link_token(session, token_hash)
    outcome = judge_start(link, chat_id, account_id, now)
    if outcome is StartOutcome.LINKED:
        store.use_link_token(session, token_hash, chat_id, now)
        store.link_chat(session, chat_id, link.account_id, link.language, now)
        return Answer(outcome.value, text(link.language, outcome.value), link.account_id)
    return Answer(outcome.value, text(language, outcome.value), account_id)


def _status(session: Session, account_id: str, language: str, public_url: str) -> str:
    orders, count = store.open_orders(session, account_id, STATUS_LINES)
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
