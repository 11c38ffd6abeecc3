"""The notify process on the real broker and database, against the Bot API double: never lost, never twice.

Each test starts `kernodeck-notify` on its own vhost; events are published as
the services' outboxes publish them. Chats are linked as customers link them
(the link event, then /start with the token).
"""

import json
import time

import aio_pika  # noqa: F401  (the broker client notify uses; here only to fail early when missing)
import httpx
import pytest
from sqlalchemy import text

from infra.local.isolation import RABBIT_API
from kernodeck_kit import dead_letters
from kernodeck_kit.db import make_engine
from services.notify.tests.conftest import PUBLIC_URL, publish
from services.notify.tests.samples import order_created

WAIT_S = 30


def accounts(count: int) -> list[str]:
    return [f"{n:032x}" for n in range(1, count + 1)]


def order_ids(chat_messages) -> list[str]:
    """The order ids of the order messages a chat received, in the order it received them."""
    return [m.text.split()[1] for m in chat_messages if m.text.startswith("Order ")]


def wait_orders(double, chats: dict[int, list[str]]) -> None:
    """Until every chat has received its orders' messages (or WAIT_S passed)."""
    double.api.wait_for(
        lambda: all(len(order_ids(double.api.messages(chat))) >= len(ids) for chat, ids in chats.items()), WAIT_S
    )


def deliveries(database_url: str) -> list[tuple]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(text("SELECT chat_id, kind, status, attempts, error FROM deliveries ORDER BY id")))
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'notify.db'}"
    return request.getfixturevalue("fresh_postgres")


def test_one_message_per_event_across_redeliveries_and_restarts(notify_factory, database_url, double, vhost):
    notify = notify_factory(database_url).start()
    chats = dict(zip((101, 102), accounts(2), strict=True))
    for chat, account in chats.items():
        notify.link(chat, account)
    events = [order_created(account, f"order-{n}-{account[-1]}") for n in range(8) for account in chats.values()]
    publish(vhost, *events[:8], *events[:8])  # the outbox relay publishing again what a crash left unmarked
    notify.stop()  # a restart in the middle: what was queued but not sent goes after it
    notify.start()
    publish(vhost, *events, *events[8:])
    expected = {chat: [e.order_id for e in events if e.account_id == account] for chat, account in chats.items()}
    wait_orders(double, expected)
    time.sleep(0.5)  # a duplicate would come right behind
    assert {chat: order_ids(double.api.messages(chat)) for chat in chats} == expected
    assert notify.metric("kernodeck_events_duplicate_total") >= 16  # counted since the restart
    assert all(status == "sent" for _, _, status, _, _ in deliveries(database_url))


def test_a_429_storm_every_message_arrives_in_order_per_chat_none_twice(notify_factory, fresh_postgres, double, vhost):
    notify = notify_factory(fresh_postgres).start()
    chats = dict(zip(range(201, 206), accounts(5), strict=True))
    for chat, account in chats.items():
        notify.link(chat, account)
    double.api.rate_limit(15, retry_after=1)
    events = [order_created(account, f"storm-{n}-{chat}") for n in range(6) for chat, account in chats.items()]
    publish(vhost, *events)
    expected = {chat: [e.order_id for e in events if e.account_id == account] for chat, account in chats.items()}
    wait_orders(double, expected)
    assert {chat: order_ids(double.api.messages(chat)) for chat in chats} == expected
    assert double.api.rate_limited == 0
    assert notify.metric("kernodeck_notify_send_retries_total", 'reason="rate_limited"') == 15
    sent = 'kind="order_created"'
    assert double.api.wait_for(lambda: notify.metric("kernodeck_notify_messages_sent_total", sent) == len(events))


def test_an_outage_longer_than_the_back_off_the_messages_arrive_once_it_is_back(
    notify_factory, fresh_postgres, double, vhost
):
    notify = notify_factory(fresh_postgres).start()  # back-off from 0.05 s, capped at 0.4 s
    chats = dict(zip((301, 302), accounts(2), strict=True))
    for chat, account in chats.items():
        notify.link(chat, account)
    events = [order_created(account, f"outage-{n}-{chat}") for n in range(5) for chat, account in chats.items()]
    double.api.set_down(True)  # the Bot API answers 502...
    publish(vhost, *events[:4])
    time.sleep(1.5)
    double.api.set_down(False)
    double.stop_serving()  # ...then refuses connections
    publish(vhost, *events[4:])
    time.sleep(1.5)
    assert all(not order_ids(double.api.messages(chat)) for chat in chats)
    retries = notify.metric("kernodeck_notify_send_retries_total", 'reason="unavailable"')
    assert retries >= 6  # past the cap of the back-off, still trying
    double.serve()
    expected = {chat: [e.order_id for e in events if e.account_id == account] for chat, account in chats.items()}
    wait_orders(double, expected)
    assert {chat: order_ids(double.api.messages(chat)) for chat in chats} == expected
    attempts = [row[3] for row in deliveries(fresh_postgres) if row[1] == "order_created"]
    assert max(attempts) >= 3 and len(attempts) == len(events)


def test_a_chat_that_blocked_the_bot_is_unlinked_and_the_others_still_receive(
    notify_factory, fresh_postgres, double, vhost
):
    notify = notify_factory(fresh_postgres).start()
    account = accounts(1)[0]
    notify.link(401, account)
    notify.link(402, account)
    double.api.block(401)
    first = order_created(account, "blocked-1")
    publish(vhost, first)
    wait_orders(double, {402: ["blocked-1"]})
    assert double.api.wait_for(lambda: notify.metric("kernodeck_notify_messages_failed_total") == 1)
    publish(vhost, order_created(account, "blocked-2"))
    wait_orders(double, {402: ["blocked-1", "blocked-2"]})
    assert order_ids(double.api.messages(401)) == []
    log = [(chat, kind, status, error) for chat, kind, status, _, error in deliveries(fresh_postgres)]
    assert (401, "order_created", "failed", "blocked: Forbidden: bot was blocked by the user") in log
    assert [row for row in log if row[0] == 401 and row[1] == "order_created"] == [log[-3]]  # none for the 2nd event


def test_killed_mid_send_nothing_is_lost_and_only_what_was_out_can_come_twice(
    notify_factory, fresh_postgres, double, vhost
):
    """The crash window measured: every message Telegram accepted whose answer the process never recorded is sent
    again after the restart, and only those."""
    notify = notify_factory(fresh_postgres).start()
    chats = dict(zip(range(501, 505), accounts(4), strict=True))
    for chat, account in chats.items():
        notify.link(chat, account)
    double.api.hold_answers(len(chats), seconds=20)  # accepted at once, answered long after the kill
    held = [order_created(account, f"held-{chat}") for chat, account in chats.items()]
    publish(vhost, *held)
    assert double.api.wait_for(lambda: double.api.held == 0)
    time.sleep(0.2)
    notify.kill()  # SIGKILL: between Telegram's acceptance and the record

    after = [order_created(account, f"after-{n}-{chat}") for n in range(3) for chat, account in chats.items()]
    publish(vhost, *after)  # queued in the broker while notify is down
    notify.start()
    expected = {chat: [f"held-{chat}", f"held-{chat}"] + [f"after-{n}-{chat}" for n in range(3)] for chat in chats}
    wait_orders(double, expected)
    time.sleep(0.5)
    assert {chat: order_ids(double.api.messages(chat)) for chat in chats} == expected
    assert notify.metric("kernodeck_notify_send_retries_total", 'reason="in_doubt"') == len(chats)
    duplicates = sum(len(ids) - len(set(ids)) for ids in expected.values())
    print(f"\nkilled with {len(chats)} messages out: {duplicates} duplicates, none lost")


def test_an_event_that_cannot_be_read_or_stored_is_set_aside_and_the_next_one_goes_through(
    notify_factory, fresh_postgres, double, vhost
):
    notify = notify_factory(fresh_postgres).start()
    account = accounts(1)[0]
    notify.link(601, account)
    with httpx.Client(base_url=RABBIT_API, auth=("guest", "guest")) as api:
        vhost_name = vhost.rsplit("/", 1)[1]
        bad = {
            "properties": {"content_type": "application/json"},
            "routing_key": "order_created",
            "payload": json.dumps({"order_id": 42}),
            "payload_encoding": "string",
        }
        assert api.post(f"/exchanges/{vhost_name}/orders.events/publish", json=bad).json()["routed"]
        publish(vhost, order_created(account, "x" * 100))  # longer than any order id: PostgreSQL refuses it
        publish(vhost, order_created(account, "after-the-bad-one"))
        wait_orders(double, {601: ["after-the-bad-one"]})
        dead = api.post(
            f"/queues/{vhost_name}/notify.dead-letters/get",
            json={"count": 10, "ackmode": "ack_requeue_false", "encoding": "auto"},
        ).json()
    assert notify.metric("kernodeck_events_dead_lettered_total", 'service="notify"') == 2
    assert [json.loads(message["payload"])["order_id"] for message in dead] == [42, "x" * 100]

    # A dead letter replayed (kernodeck-admin dead-letters) comes by the default exchange, its origin in headers.
    replayed = {
        "properties": {
            "content_type": "application/json",
            "headers": {dead_letters.EXCHANGE: "orders.events", dead_letters.ROUTING_KEY: "order_created"},
        },
        "routing_key": "notify.events",
        "payload": json.dumps(order_created(account, "replayed").to_message()),
        "payload_encoding": "string",
    }
    with httpx.Client(base_url=RABBIT_API, auth=("guest", "guest")) as api:
        assert api.post(f"/exchanges/{vhost_name}/amq.default/publish", json=replayed).json()["routed"]
    wait_orders(double, {601: ["after-the-bad-one", "replayed"]})


def test_the_logs_never_show_the_bot_token(notify_factory, fresh_postgres, double, vhost):
    notify = notify_factory(fresh_postgres, log_level="DEBUG").start()
    notify.link(701, accounts(1)[0])
    double.stop_serving()
    publish(vhost, order_created(accounts(1)[0], "while-down"))
    time.sleep(1.0)
    double.serve()
    wait_orders(double, {701: ["while-down"]})
    notify.stop()
    log = notify.log_path.read_text()
    assert "getUpdates" in log or "sendMessage" in log  # DEBUG logs name the calls
    assert double.token not in log and double.token.split(":")[1] not in log
    assert f"{PUBLIC_URL}/#/orders/while-down" in double.api.messages(701)[-1].text


def test_a_stop_waits_for_the_messages_that_are_out_so_a_restart_sends_nothing_twice(
    notify_factory, fresh_postgres, double, vhost
):
    notify = notify_factory(fresh_postgres).start()
    account = accounts(1)[0]
    notify.link(801, account)
    double.api.hold_answers(1, seconds=2)
    publish(vhost, order_created(account, "out-at-the-stop"))
    assert double.api.wait_for(lambda: double.api.held == 0)
    notify.stop()  # SIGTERM while Telegram holds its answer back
    assert [row[2] for row in deliveries(fresh_postgres) if row[1] == "order_created"] == ["sent"]
    notify.start()
    publish(vhost, order_created(account, "after-the-restart"))
    wait_orders(double, {801: ["out-at-the-stop", "after-the-restart"]})
    assert order_ids(double.api.messages(801)) == ["out-at-the-stop", "after-the-restart"]


def test_a_burst_holding_an_event_the_database_refuses_sets_aside_that_one_and_applies_the_others_once(
    notify_factory, fresh_postgres, double, vhost
):
    notify = notify_factory(fresh_postgres).start()
    account = accounts(1)[0]
    notify.link(901, account)
    notify.stop()  # the burst waits in the queue, and is taken at once by the restarted process
    burst = [order_created(account, f"burst-{n}") for n in range(5)]
    publish(vhost, *burst[:2], order_created(account, "y" * 100), *burst[2:], burst[0])
    notify.start()
    wait_orders(double, {901: [event.order_id for event in burst]})
    time.sleep(0.5)  # a duplicate would come right behind
    assert order_ids(double.api.messages(901)) == [event.order_id for event in burst]
    assert notify.metric("kernodeck_events_dead_lettered_total", 'service="notify"') == 1
