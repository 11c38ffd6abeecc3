"""The outbox's publisher against the real broker: what it confirms, what the broker returns, and a connection
lost between two batches."""

import uuid

import eventlet
import pytest
from kombu import Connection, Exchange, Queue

from kernodeck_kit.outbox import Emitted, Unroutable
from kernodeck_kit.transport.publish import AmqpPublisher, publishing_connection

RECEIVER = "test receiver"


def rows(event_type: str, count: int, first_id: int = 1) -> list[Emitted]:
    return [Emitted(uuid.uuid4().hex, "orders", event_type, f'{{"n": {n}}}', id=first_id + n) for n in range(count)]


@pytest.fixture
def received(rabbit_config):
    """The bodies that reach a queue bound to orders' `order_created`, in order of arrival."""
    uri = rabbit_config["AMQP_URI"]
    exchange = Exchange("orders.events", type="topic", durable=True)
    with Connection(uri, transport_options={"client_properties": {"connection_name": RECEIVER}}) as connection:
        queue = Queue("test-publish", exchange, routing_key="order_created", exclusive=True)(connection)
        queue.declare()

        def bodies() -> list[str]:
            got = []
            while (message := queue.get(no_ack=True)) is not None:
                got.append(message.body.decode() if isinstance(message.body, bytes) else message.body)
            return got

        yield bodies


@pytest.fixture
def publisher(rabbit_config):
    publisher = AmqpPublisher(rabbit_config["AMQP_URI"])
    yield publisher
    publisher.close()


def test_a_batch_is_confirmed_and_arrives_in_order(publisher, received):
    batch = rows("order_created", 50)
    published = publisher.many(batch)
    assert published.confirmed == batch and not published.unroutable and not published.failed
    assert received() == [row.payload for row in batch]


def test_an_event_no_queue_receives_comes_back_and_the_others_are_confirmed(publisher, received):
    batch = [*rows("order_created", 2), *rows("order_paid", 1, first_id=3), *rows("order_created", 2, first_id=4)]
    published = publisher.many(batch)
    assert [row.id for row in published.unroutable] == [3]
    assert [row.id for row in published.confirmed] == [1, 2, 4, 5]
    with pytest.raises(Unroutable):
        publisher(rows("order_paid", 1)[0])
    assert len(received()) == 4


def test_a_kept_connection_the_broker_closed_is_replaced_for_the_next_batch(
    publisher, received, rabbit_manager, rabbit_config
):
    assert publisher.many(rows("order_created", 1)).confirmed
    vhost = rabbit_config["vhost"]

    def publishers() -> list[str]:
        connections = rabbit_manager._get("vhosts", vhost, "connections")
        return [c["name"] for c in connections if c.get("client_properties", {}).get("connection_name") != RECEIVER]

    with eventlet.Timeout(60):  # the management API lists connections as of its last statistics
        while not (names := publishers()):
            eventlet.sleep(0.2)
    for name in names:
        rabbit_manager.delete_connection(name)
    batch = rows("order_created", 3, first_id=2)
    assert publisher.many(batch).confirmed == batch
    assert len(received()) == 4


def test_a_publishing_connection_asks_for_no_blocked_notices(rabbit_config, rabbit_manager):
    """What keeps py-amqp's basic_publish from reading the socket before each message (transport.publish)."""
    with publishing_connection(rabbit_config["AMQP_URI"]) as connection:
        connection.ensure_connection()
        assert connection.connection.client_properties["capabilities"]["connection.blocked"] is False
    with Connection(rabbit_config["AMQP_URI"]) as connection:  # kombu's own asks for them
        connection.ensure_connection()
        assert connection.connection.client_properties["capabilities"]["connection.blocked"] is True
