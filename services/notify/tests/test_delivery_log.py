"""The sender's work on the delivery log, on the memory unit and on the SQL unit (SQLite in memory) alike: each
chat's messages one at a time and in order, what was out at a stop sent again, what Telegram answered."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import SQLModel

from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.units import SqlUnits
from kernodeck_notify import use_cases
from kernodeck_notify.domain.deliveries import Delivery
from kernodeck_notify.store import SqlNotify
from services.notify.tests.memory import memory_units

pytestmark = pytest.mark.unit

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["memory", "sql"])
def units(request):
    if request.param == "memory":
        yield memory_units()
        return
    engine = make_engine("sqlite://")
    SQLModel.metadata.create_all(engine)
    yield SqlUnits(Store(engine, "notify", relay=None), SqlNotify)
    engine.dispose()


def queue(units, *chats: int, at: datetime = NOW) -> None:
    with units.transaction() as unit:
        for n, chat_id in enumerate(chats):
            unit.queue_message(Delivery(f"event-{n}", chat_id, "acct", "order_created", f"to {chat_id}", at))


def due(units, excluded=()) -> list[tuple[int, str]]:
    heads, _ = use_cases.due(units, 10, set(excluded))
    return [(delivery.chat_id, delivery.source_key) for delivery in heads]


def test_each_chat_has_its_oldest_message_due_and_none_while_one_is_out(units):
    queue(units, 1, 2, 1)
    heads, oldest = use_cases.due(units, 10, set())
    assert [(d.chat_id, d.source_key) for d in heads] == [(1, "event-0"), (2, "event-1")]
    assert oldest == NOW
    assert due(units, excluded={2}) == [(1, "event-0")]
    use_cases.claim(units, heads[:1], NOW)
    assert due(units) == [(2, "event-1")]  # chat 1's next waits for its first
    use_cases.sent(units, heads[0], 77, NOW)
    assert due(units) == [(2, "event-1"), (1, "event-2")]  # oldest first


def test_a_message_not_sent_yet_is_due_again_and_a_refused_one_is_not(units):
    queue(units, 1, 2)
    first, second = use_cases.due(units, 10, set())[0]
    use_cases.claim(units, [first, second], NOW)
    use_cases.not_sent_yet(units, first, "429")
    use_cases.refused(units, second, "400: chat not found", NOW)
    assert due(units) == [(1, "event-0")]


def test_what_was_out_at_a_stop_goes_again(units):
    queue(units, 1, 2)
    heads, _ = use_cases.due(units, 10, set())
    use_cases.claim(units, heads, NOW)
    assert due(units) == []
    assert use_cases.release_in_doubt(units) == 2
    assert due(units) == [(1, "event-0"), (2, "event-1")]
    assert use_cases.release_in_doubt(units) == 0


def test_a_chat_that_blocked_the_bot_is_unlinked_and_its_waiting_messages_given_up(units):
    with units.transaction() as unit:
        unit.link_chat(1, "acct", "en", NOW)
        unit.link_chat(2, "acct", "vi", NOW)
    queue(units, 1, 1, 2)
    head = use_cases.due(units, 10, set())[0][0]
    assert use_cases.blocked(units, head, "403: bot was blocked", NOW) == 2
    assert due(units) == [(2, "event-2")]
    with units.transaction() as unit:
        assert [chat.chat_id for chat in unit.chats_of("acct")] == [2]


def test_a_group_that_moved_takes_its_link_and_waiting_messages_to_its_new_id(units):
    with units.transaction() as unit:
        unit.link_chat(-1, "acct", "id", NOW)
    queue(units, -1, -1)
    head = use_cases.due(units, 10, set())[0][0]
    use_cases.claim(units, [head], NOW)
    use_cases.migrated(units, head, -100)
    assert due(units) == [(-100, "event-0")]
    with units.transaction() as unit:
        assert (unit.chat(-1), unit.chat(-100).language) == (None, "id")


def test_prune_forgets_what_finished_long_enough_ago_and_keeps_what_waits(units):
    queue(units, 1, 2)
    sent, _ = use_cases.due(units, 10, set())[0]
    use_cases.claim(units, [sent], NOW)
    use_cases.sent(units, sent, 1, NOW)
    assert use_cases.prune(units, NOW + timedelta(days=1), timedelta(days=2), timedelta(days=1)) == 0
    assert use_cases.prune(units, NOW + timedelta(days=3), timedelta(days=2), timedelta(days=1)) == 1
    assert due(units) == [(2, "event-1")]
