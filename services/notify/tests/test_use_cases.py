"""Events and commands applied once, in memory: links, copies, the messages queued and their language."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.events import OrderStatusChanged, TelegramUnlinkRequested
from kernodeck_notify.domain.deliveries import Delivery
from kernodeck_notify.templates import text
from kernodeck_notify.use_cases import ChatMessage, apply_chat_message, apply_event, apply_events
from services.notify.tests.conftest import PUBLIC_URL, link_request
from services.notify.tests.memory import memory_units
from services.notify.tests.samples import ACCOUNT, order_created

pytestmark = pytest.mark.unit

NOW = datetime.now(UTC)
BOT = "kernodeck_bot"


@pytest.fixture
def units():
    return memory_units()


class Chat:
    """A chat typing to the bot; update ids grow like Telegram's."""

    next_update = 1

    def __init__(self, units, chat_id: int, language_code: str = "en"):
        self.units, self.chat_id, self.language_code = units, chat_id, language_code

    def says(self, text: str, now: datetime = NOW, update_id: int | None = None) -> str | None:
        """What the bot answers (None: nothing)."""
        if update_id is None:
            update_id, Chat.next_update = Chat.next_update, Chat.next_update + 1
        message = ChatMessage(update_id, self.chat_id, text, self.language_code)
        if not apply_chat_message(self.units, message, BOT, PUBLIC_URL, now):
            return None
        return queued(self.units, self.chat_id)[-1].text


def queued(units, chat_id: int | None = None) -> list[Delivery]:
    deliveries = [logged.delivery for logged in units.state.deliveries.values()]
    return [delivery for delivery in deliveries if chat_id is None or delivery.chat_id == chat_id]


def linked(units, chat_id: int, account_id: str = ACCOUNT, language: str = "en") -> Chat:
    token, event = link_request(account_id, language)
    apply_event(units, event, PUBLIC_URL, NOW)
    chat = Chat(units, chat_id)
    assert chat.says(f"/start {token}") == text(language, "linked")
    return chat


def test_a_deep_link_binds_the_chat_and_greets_it_in_the_language_of_the_request(units):
    token, event = link_request(ACCOUNT, "id")
    apply_event(units, event, PUBLIC_URL, NOW)
    assert Chat(units, 10, "vi").says(f"/start {token}") == text("id", "linked")
    assert [(c.chat_id, c.account_id, c.language) for c in units.state.chats.values()] == [(10, ACCOUNT, "id")]


def test_a_used_expired_or_unknown_link_is_politely_refused_in_the_chat_language(units):
    token, event = link_request(ACCOUNT)
    apply_event(units, event, PUBLIC_URL, NOW)
    assert Chat(units, 10).says(f"/start {token}") == text("en", "linked")
    assert Chat(units, 10).says(f"/start {token}") == text("en", "already_linked")
    assert Chat(units, 11, "vi").says(f"/start {token}") == text("vi", "link_used")

    late, event = link_request(ACCOUNT, minutes=1)
    apply_event(units, event, PUBLIC_URL, NOW)
    assert Chat(units, 12, "id").says(f"/start {late}", now=event.expires_at) == text("id", "link_expired")
    assert Chat(units, 12).says("/start not-a-token") == text("en", "link_unknown")
    assert Chat(units, 12).says("/start") == text("en", "start_without_token")
    assert [c.chat_id for c in units.state.chats.values() if c.account_id == ACCOUNT] == [10]


def test_an_event_queues_one_message_per_linked_chat_in_its_language_and_a_redelivery_none(units):
    linked(units, 10, language="en")
    linked(units, 11, language="vi")
    linked(units, 12, account_id="b" * 32)
    event = order_created()
    assert apply_event(units, event, PUBLIC_URL, NOW) == 2
    assert apply_event(units, event, PUBLIC_URL, NOW) == 0
    messages = [row for row in queued(units) if row.source_key == event.event_id]
    assert [(row.chat_id, row.kind) for row in messages] == [(10, "order_created"), (11, "order_created")]
    assert messages[0].text.startswith("Order ") and messages[1].text.startswith("Đơn hàng ")
    assert all(f"{PUBLIC_URL}/#/orders/{event.order_id}" in row.text for row in messages)


def test_events_applied_together_queue_their_messages_in_order_each_once(units):
    linked(units, 10)
    first, second, third = (order_created(order_id=f"o-{n}") for n in (1, 2, 3))
    paid = OrderStatusChanged(order_id="o-1", account_id=ACCOUNT, status="paid", previous_status="awaiting_payment")
    assert apply_events(units, [first, second, first], PUBLIC_URL, NOW) == 2  # an event twice in the batch: once
    assert apply_events(units, [second, paid, third], PUBLIC_URL, NOW) == 1  # the redelivered one passed over
    assert [row.source_key for row in queued(units, 10)][-3:] == [first.event_id, second.event_id, third.event_id]
    assert units.state.orders["o-1"].status == "paid"


def test_an_event_for_an_account_without_a_chat_queues_nothing(units):
    assert apply_event(units, order_created(), PUBLIC_URL, NOW) == 0
    assert queued(units) == []


def test_a_repeated_update_is_answered_once(units):
    chat = Chat(units, 10)
    assert chat.says("/help", update_id=5000) == text("en", "help")
    assert chat.says("/help", update_id=5000) is None
    assert len(queued(units, 10)) == 1


def test_status_lists_the_open_orders_newest_first_with_their_links(units):
    chat = linked(units, 10)
    assert chat.says("/status") == text("en", "status_empty")
    apply_event(units, order_created(order_id="o-old"), PUBLIC_URL, NOW)
    apply_event(units, order_created(order_id="o-new"), PUBLIC_URL, NOW)
    apply_event(units, order_created(order_id="o-done"), PUBLIC_URL, NOW)
    ended = OrderStatusChanged(order_id="o-done", account_id=ACCOUNT, status="ended", previous_status="ready")
    paid = OrderStatusChanged(order_id="o-old", account_id=ACCOUNT, status="paid", previous_status="awaiting_payment")
    stale = OrderStatusChanged(
        order_id="o-old",
        account_id=ACCOUNT,
        status="awaiting_payment",
        previous_status="x",
        occurred_at=NOW - timedelta(hours=1),
    )
    for event in (ended, paid, stale):  # the stale change arrives last and changes nothing
        apply_event(units, event, PUBLIC_URL, NOW)
    assert chat.says("/status").splitlines() == [
        "Your open orders:",
        "o-old: Paid",
        f"{PUBLIC_URL}/#/orders/o-old",
        "o-new: Awaiting payment",
        f"{PUBLIC_URL}/#/orders/o-new",
    ]


def test_status_counts_the_orders_it_does_not_list(units):
    chat = linked(units, 10)
    for n in range(12):
        apply_event(units, order_created(order_id=f"o{n}"), PUBLIC_URL, NOW)
    answer = chat.says("/status").splitlines()
    assert len(answer) == 1 + 2 * 10 + 1 and answer[-1] == "… and 2 more."


def test_unlink_stops_this_chat_only(units):
    first, second = linked(units, 10), linked(units, 11)
    assert first.says("/unlink") == text("en", "unlinked")
    assert first.says("/status") == text("en", "not_linked")
    apply_event(units, order_created(), PUBLIC_URL, NOW)
    assert [row.kind for row in queued(units, 11)][-1] == "order_created"
    assert [row.kind for row in queued(units, 10)][-1] == "reply:not_linked"
    assert second.says("/status").startswith("Your open orders:")


def test_unlinking_from_the_account_page_tells_and_stops_every_chat_and_voids_waiting_links(units):
    linked(units, 10)
    linked(units, 11, language="vi")
    token, event = link_request(ACCOUNT)
    apply_event(units, event, PUBLIC_URL, NOW)
    assert apply_event(units, TelegramUnlinkRequested(account_id=ACCOUNT), PUBLIC_URL, NOW) == 2
    assert [queued(units, chat)[-1].text for chat in (10, 11)] == [
        text("en", "unlinked_by_account"),
        text("vi", "unlinked_by_account"),
    ]
    assert apply_event(units, order_created(), PUBLIC_URL, NOW) == 0
    assert Chat(units, 12).says(f"/start {token}") == text("en", "link_unknown")


@pytest.mark.parametrize("language", ["vi", "id", "en"])
def test_language_changes_the_chat_language(units, language):
    chat = linked(units, 10)
    assert chat.says(f"/language {language.upper()}") == text(language, "language_set")
    assert chat.says("/language fr") == text(language, "language_usage")
    assert chat.says("/language") == text(language, "language_usage")
    apply_event(units, order_created(), PUBLIC_URL, NOW)
    assert queued(units, 10)[-1].text.split()[0] == {"en": "Order", "vi": "Đơn", "id": "Pesanan"}[language]


def test_commands_of_a_chat_not_linked(units):
    chat = Chat(units, 10, "vi")
    for command in ("/status", "/unlink", "/language vi"):
        assert chat.says(command) == text("vi", "not_linked")
    assert chat.says("/help") == chat.says("hello") == chat.says("/what") == text("vi", "help")


def test_in_a_group_only_commands_to_the_bot_are_answered(units):
    group = Chat(units, -100)
    assert group.says("hello everyone") is None
    assert group.says("/status@another_bot") is None
    assert group.says(f"/help@{BOT}") == text("en", "help")
