"""Events that keep failing are set aside per service, and an operator lists, replays or drops them."""

import json

import pytest
from kombu import Connection, Exchange, Queue
from nameko.standalone.events import event_dispatcher
from sqlalchemy.exc import OperationalError

from kernodeck_contracts.errors import EventTooEarly
from kernodeck_contracts.events import OrderCreated
from kernodeck_kit import dead_letters, metrics
from kernodeck_kit.dead_letters_cli import main as cli
from kernodeck_kit.settings import SETTINGS_KEY
from kernodeck_kit.testing import wait_until
from kernodeck_kit.transport.events import RETRY_PAUSE_KEY, consumer

MAX_DELIVERIES = 3
attempts: list[str] = []
handled: list[str] = []
failing = {"always": True}


class Picky:
    """Refuses every event while `failing["always"]`; an order id starting with "db-" meets a database away four
    times, one starting with "early-" comes four times before the event it depends on."""

    name = "picky"

    @consumer(OrderCreated)
    def on_created(self, payload):
        attempts.append(payload["order_id"])
        transient = payload["order_id"].startswith(("db-", "early-"))
        if transient and attempts.count(payload["order_id"]) <= 4:
            if payload["order_id"].startswith("db-"):
                raise OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly"))
            raise EventTooEarly(payload["order_id"])
        if failing["always"] and not transient:
            raise ValueError("no version of this event can be read")
        handled.append(payload["order_id"])


@pytest.fixture
def config(rabbit_config):
    attempts.clear()
    handled.clear()
    failing["always"] = True
    return {**rabbit_config, RETRY_PAUSE_KEY: 0.02, SETTINGS_KEY: {"event_max_deliveries": MAX_DELIVERIES}}


def publish(config, *order_ids):
    dispatch = event_dispatcher(config)
    for order_id in order_ids:
        dispatch("orders", "order_created", {"event_id": f"evt-{order_id}", "order_id": order_id})


def test_an_event_that_always_fails_is_set_aside_after_the_bound_then_replayed(container_factory, config):
    dead = metrics.EVENTS_DEAD_LETTERED.labels("picky")
    before = dead._value.get()
    container_factory(Picky, config).start()
    publish(config, "o-1")
    wait_until(lambda: dead._value.get() == before + 1)
    assert attempts == ["o-1"] * MAX_DELIVERIES

    [letter] = dead_letters.peek(config["AMQP_URI"], "picky")
    assert (letter.id, letter.exchange, letter.routing_key) == ("evt-o-1", "orders.events", "order_created")
    assert letter.queue == "evt-orders-order_created--picky.on_created"
    assert (letter.deliveries, letter.error) == (MAX_DELIVERIES, "ValueError: no version of this event can be read")
    assert json.loads(letter.body)["order_id"] == "o-1"
    assert len(dead_letters.peek(config["AMQP_URI"], "picky")) == 1  # listing leaves it there

    failing["always"] = False  # the handler is fixed
    assert dead_letters.replay(config["AMQP_URI"], "picky") == ["evt-o-1"]
    wait_until(lambda: handled == ["o-1"])
    assert dead_letters.peek(config["AMQP_URI"], "picky") == []
    assert dead._value.get() == before + 1


@pytest.mark.parametrize("order_id", ["db-1", "early-1"])
def test_a_database_away_or_an_event_too_early_is_not_counted_against_the_event(container_factory, config, order_id):
    container_factory(Picky, config).start()
    publish(config, order_id)
    wait_until(lambda: handled == [order_id])
    assert attempts == [order_id] * 5  # four failures, more than the bound, then handled
    assert dead_letters.peek(config["AMQP_URI"], "picky") == []


def test_the_operator_drops_one_and_replays_the_rest_from_the_command_line(container_factory, config, capsys):
    container_factory(Picky, config).start()
    publish(config, "o-2", "o-3", "o-4")
    wait_until(lambda: len(dead_letters.peek(config["AMQP_URI"], "picky")) == 3)
    uri = ["--amqp-uri", config["AMQP_URI"]]
    capsys.readouterr()

    assert cli([*uri, "list", "picky"]) == 0
    assert sorted(json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()) == [
        "evt-o-2",
        "evt-o-3",
        "evt-o-4",
    ]
    assert cli([*uri, "drop", "picky", "evt-o-3", "evt-nope"]) == 1
    assert json.loads(capsys.readouterr().out) == {"drop": ["evt-o-3"], "not_found": ["evt-nope"]}
    assert cli([*uri, "replay", "picky"]) == 2  # neither ids nor --all
    failing["always"] = False
    assert cli([*uri, "replay", "picky", "--all"]) == 0
    wait_until(lambda: sorted(handled) == ["o-2", "o-4"])
    assert dead_letters.peek(config["AMQP_URI"], "picky") == []


def test_a_message_the_broker_set_aside_is_read_and_replayed_to_its_queue(rabbit_config):
    """As notify sets its own aside: rejected from a queue whose dead-letter exchange is `<service>.dead-letters`."""
    uri = rabbit_config["AMQP_URI"]
    source = Exchange("orders.events", type="topic", durable=True)
    with Connection(uri) as connection:
        channel = connection.channel()
        dead_letters.dead_letter_queue("notify")(channel).declare()
        queue = Queue(
            "notify.events",
            source,
            routing_key="order_created",
            durable=True,
            queue_arguments={"x-dead-letter-exchange": "notify.dead-letters"},
        )(channel)
        queue.declare()
        channel.basic_publish(channel.prepare_message(b'{"event_id": "e-9"}'), "orders.events", "order_created")
        wait_until(lambda: (message := queue.get(no_ack=False)) is not None and message.reject() is None)

        [letter] = dead_letters.peek(uri, "notify")
        assert (letter.id, letter.exchange, letter.routing_key, letter.queue) == (
            "e-9",
            "orders.events",
            "order_created",
            "notify.events",
        )
        assert dead_letters.replay(uri, "notify", {"e-9"}) == ["e-9"]
        wait_until(lambda: (replayed := queue.get(no_ack=True)) is not None and replayed.headers[dead_letters.EXCHANGE])
    assert dead_letters.peek(uri, "notify") == []
