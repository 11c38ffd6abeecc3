"""The outbox and the idempotent consumer against the real broker and PostgreSQL."""

import json
from datetime import timedelta
from types import SimpleNamespace

import eventlet
import pytest
from kombu import Connection
from nameko.events import event_handler
from nameko.rpc import rpc
from nameko.standalone.events import event_dispatcher
from nameko.standalone.rpc import ServiceRpcProxy
from prometheus_client import REGISTRY
from sqlalchemy import event as sa_event
from sqlalchemy import update
from sqlmodel import Session, SQLModel, select

from kernodeck_contracts.events import OrderCreated, OrderStatusChanged
from kernodeck_kit import metrics
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import OutboxRelay, Store
from kernodeck_kit.tables import OutboxMessage, ProcessedEvent
from kernodeck_kit.testing import service_config, truncate_all, wait_until
from kernodeck_kit.transport import dependencies
from kernodeck_kit.transport.dependencies import Database
from kernodeck_kit.transport.publish import amqp_publisher
from kernodeck_kit.types import utcnow

received: list[dict] = []
applied: list[str] = []


def order_created(order_id: str) -> OrderCreated:
    return OrderCreated(
        order_id=order_id,
        account_id="a1",
        model_id="h100",
        duration_days=3,
        lots=1,
        total_gpus=1,
        preparation="ubuntu",
        total_usd_cents=18900,
    )


class Producer:
    name = "orders"
    db = Database()

    @rpc
    def create(self, order_id):
        with self.db.transaction() as tx:
            tx.emit(order_created(order_id))


class Listener:
    name = "listener"

    @event_handler("orders", "order_created")
    def on_created(self, payload):
        received.append(payload)


class IdempotentConsumer:
    name = "consumer"
    db = Database()

    @event_handler("orders", "order_created")
    def on_created(self, payload):
        event = OrderCreated.from_message(payload)
        with self.db.consume(event) as tx:
            if tx is not None:
                applied.append(event.order_id)


@pytest.fixture
def config(rabbit_config, pg_database):
    url = pg_database()
    truncate_all(url)
    received.clear()
    applied.clear()
    return service_config(rabbit_config, url)


def unsent_rows(url):
    engine = make_engine(url)
    with Session(engine) as session:
        rows = session.exec(select(OutboxMessage).where(OutboxMessage.sent_at.is_(None))).all()
    engine.dispose()
    return rows


def test_an_event_leaves_right_after_the_commit(container_factory, config):
    # The relay's first pass an hour away: only the worker's publish after its commit can deliver the event. With
    # the tests' 0.2 s relay, a slow worker's row could be published by both, as the relay is allowed to.
    config["OUTBOX_RELAY_INTERVAL_S"] = 3600
    container_factory(Listener, config).start()
    container_factory(Producer, config).start()
    with ServiceRpcProxy("orders", config) as orders:
        orders.create("o-1")
    wait_until(lambda: received)
    assert [(payload["order_id"], payload["version"]) for payload in received] == [("o-1", 1)]
    assert unsent_rows(config["DATABASE_URL"]) == []


def test_a_service_killed_between_commit_and_publish_delivers_after_restart(container_factory, config):
    container_factory(Listener, config).start()
    producer = container_factory(Producer, config)
    dependency = next(d for d in producer.extensions if isinstance(d, Database))
    producer.start()

    def broker_gone(_row):
        raise ConnectionError("broker unreachable")

    dependency.relay.publish = broker_gone
    with ServiceRpcProxy("orders", config) as orders:
        orders.create("o-2")
    producer.kill()
    assert [row.event_type for row in unsent_rows(config["DATABASE_URL"])] == ["order_created"]
    assert received == []

    container_factory(Producer, config).start()
    wait_until(lambda: len(received) == 1)
    assert received[0]["order_id"] == "o-2"
    assert unsent_rows(config["DATABASE_URL"]) == []


def test_an_event_no_queue_receives_stays_unsent_until_one_does(container_factory, config):
    unroutable = metrics.EVENTS_UNROUTABLE.labels("orders", "order_created")
    before = unroutable._value.get()
    container_factory(Producer, config).start()
    with ServiceRpcProxy("orders", config) as orders:
        orders.create("o-7")
    wait_until(lambda: unroutable._value.get() >= before + 2)  # the commit's publish, then the relay's
    [row] = unsent_rows(config["DATABASE_URL"])
    assert row.attempts >= 2

    container_factory(Listener, config).start()  # its queue is declared: the relay's next try reaches it
    wait_until(lambda: len(received) == 1)
    assert received[0]["order_id"] == "o-7"
    wait_until(lambda: unsent_rows(config["DATABASE_URL"]) == [])


def test_many_rows_go_out_together_in_order_and_one_no_queue_receives_stays_unsent(container_factory, config):
    container_factory(Listener, config).start()  # order_created only: nobody receives order_status_changed
    engine = make_engine(config["DATABASE_URL"])
    publisher = amqp_publisher(config["AMQP_URI"])
    with Store(engine, "orders", relay=None).transaction() as tx:
        for n in range(3):
            tx.emit(order_created(f"o-{n}"))
        tx.emit(OrderStatusChanged(order_id="o-0", account_id="a1", status="paid", previous_status="awaiting_payment"))
        for n in range(3, 6):
            tx.emit(order_created(f"o-{n}"))
    assert OutboxRelay(engine, "orders", publisher).publish_pending(older_than=timedelta(seconds=-1)) == 6
    wait_until(lambda: len(received) == 6)
    assert [payload["order_id"] for payload in received] == [f"o-{n}" for n in range(6)]
    [unsent] = unsent_rows(config["DATABASE_URL"])
    assert (unsent.event_type, unsent.attempts) == ("order_status_changed", 1)
    publisher.close()
    engine.dispose()


def test_the_relay_tries_rows_that_failed_least_first(config):
    engine = make_engine(config["DATABASE_URL"])
    tried = []
    relay = OutboxRelay(engine, "orders", publish=lambda row: tried.append(json.loads(row.payload)["order_id"]))
    with Store(engine, "orders", relay=None).transaction() as tx:
        tx.emit(order_created("o-8"))
        tx.emit(order_created("o-9"))
    with Session(engine) as session:
        session.execute(update(OutboxMessage).where(OutboxMessage.id == 1).values(attempts=40))
        session.commit()
    assert relay.publish_pending(older_than=timedelta(0), batch=1) == 1
    assert tried == ["o-9"]
    engine.dispose()


def test_the_relay_leaves_alone_rows_their_worker_is_still_publishing(config):
    engine = make_engine(config["DATABASE_URL"])
    published, publishing, confirmed = [], eventlet.event.Event(), eventlet.event.Event()

    def slow_broker(row):
        published.append(row.event_id)
        publishing.send()
        confirmed.wait()  # the worker waits for the broker's confirm

    store = Store(engine, "orders", OutboxRelay(engine, "orders", slow_broker))

    def commit():
        with store.transaction() as tx:
            tx.emit(order_created("o-10"))

    worker = eventlet.spawn(commit)
    publishing.wait()
    relay = OutboxRelay(engine, "orders", publish=lambda row: published.append(row.event_id))
    assert relay.publish_pending(older_than=timedelta(seconds=-1)) == 0
    confirmed.send()
    worker.wait()
    assert len(published) == 1
    assert unsent_rows(config["DATABASE_URL"]) == []
    engine.dispose()


def test_the_worker_locks_its_rows_once_their_events_are_on_the_broker(config):
    """The lock that keeps the relay off is taken while the broker confirms: its round trips never delay an event."""
    engine = make_engine(config["DATABASE_URL"])
    store = Store(engine, "orders", OutboxRelay(engine, "orders", amqp_publisher(config["AMQP_URI"])))
    on_the_broker_at_the_lock = []
    with Connection(config["AMQP_URI"]) as connection:
        channel = connection.channel()
        channel.exchange_declare("orders.events", "topic", durable=True, auto_delete=False)
        queue, _, _ = channel.queue_declare("", exclusive=True)
        channel.queue_bind(queue, "orders.events", "order_created")

        def before_statement(conn, cursor, statement, *args):
            if "FOR UPDATE" in statement:
                on_the_broker_at_the_lock.append(arrived(channel, queue))

        sa_event.listen(engine, "before_cursor_execute", before_statement)
        with store.transaction() as tx:
            tx.emit(order_created("o-11"))
    assert on_the_broker_at_the_lock == [True]
    assert unsent_rows(config["DATABASE_URL"]) == []
    engine.dispose()


def arrived(channel, queue: str, seconds: float = 5.0) -> bool:
    """Whether a message comes to `queue` within `seconds`."""
    with eventlet.Timeout(seconds, False):
        while channel.basic_get(queue, no_ack=True) is None:
            eventlet.sleep(0.01)
        return True
    return False


def test_an_event_delivered_twice_has_one_effect(container_factory, config):
    container_factory(IdempotentConsumer, config).start()
    dispatch = event_dispatcher(config)
    event = order_created("o-3")
    dispatch("orders", "order_created", event.to_message())
    dispatch("orders", "order_created", event.to_message())
    dispatch("orders", "order_created", order_created("o-4").to_message())
    wait_until(lambda: len(applied) >= 2)
    eventlet.sleep(0.3)
    assert sorted(applied) == ["o-3", "o-4"]


def test_two_workers_consuming_one_event_at_once_apply_it_once_and_neither_fails(config):
    engine = make_engine(config["DATABASE_URL"])
    store = Store(engine, "consumer", relay=None)
    event = order_created("o-7")
    first_inside, outcomes = eventlet.event.Event(), []

    def first():
        with store.consume(event) as tx:
            first_inside.send()
            eventlet.sleep(0.3)  # the second worker's record waits on this uncommitted one
            outcomes.append(tx is not None)

    def second():
        first_inside.wait()
        with store.consume(event) as tx:
            outcomes.append(tx is not None)

    for worker in [eventlet.spawn(first), eventlet.spawn(second)]:
        worker.wait()
    assert outcomes == [True, False]
    engine.dispose()


def test_pruning_forgets_old_sent_rows_and_keeps_unsent_ones(config):
    engine = make_engine(config["DATABASE_URL"])
    relay = OutboxRelay(engine, "orders", publish=lambda row: None)
    store = Store(engine, "orders", relay=None)
    with store.transaction() as tx:
        tx.emit(order_created("o-5"))
        tx.emit(order_created("o-6"))
    with Session(engine) as session:
        rows = session.exec(select(OutboxMessage).order_by(OutboxMessage.id)).all()
    relay.publish_rows(rows[:1])
    assert relay.prune(sent_before=utcnow() - timedelta(minutes=1)) == 0
    assert relay.prune(sent_before=utcnow() + timedelta(minutes=1)) == 1
    assert [row.event_type for row in unsent_rows(config["DATABASE_URL"])] == ["order_created"]
    engine.dispose()


def test_the_relay_prunes_on_its_first_pass_even_right_after_boot(container_factory, config, monkeypatch):
    monkeypatch.setattr(dependencies, "time", SimpleNamespace(monotonic=lambda: 5.0))  # a host up for 5 s
    pruned = []
    monkeypatch.setattr(OutboxRelay, "prune", lambda _relay, sent_before: pruned.append(sent_before) or 0)
    container_factory(Producer, {**config, "OUTBOX_RELAY_INTERVAL_S": 0.05}).start()
    wait_until(lambda: pruned)


def test_processed_events_are_forgotten_after_their_retention_and_not_before(config):
    engine = make_engine(config["DATABASE_URL"])
    store = Store(engine, "consumer", relay=None)
    old, recent = order_created("o-8"), order_created("o-9")
    for event in (old, recent):
        with store.consume(event) as tx:
            assert tx is not None
    with Session(engine) as session:
        session.execute(
            update(ProcessedEvent)
            .values(processed_at=utcnow() - timedelta(days=31))
            .where(ProcessedEvent.event_id == old.event_id)
        )
        session.commit()
    assert store.prune_processed(utcnow() - timedelta(days=31, seconds=1)) == 0
    assert store.prune_processed(utcnow() - timedelta(days=30)) == 1
    with Session(engine) as session:
        assert session.exec(select(ProcessedEvent.event_id)).all() == [recent.event_id]
    with store.consume(recent) as tx:
        assert tx is None  # still remembered: a redelivery changes nothing
    engine.dispose()


def test_the_relay_prunes_processed_events_past_the_configured_retention(container_factory, config, monkeypatch):
    pruned = []
    monkeypatch.setattr(Store, "prune_processed", lambda _store, before: pruned.append(before) or 0)
    container_factory(
        Producer, {**config, "OUTBOX_RELAY_INTERVAL_S": 0.05, "PROCESSED_EVENTS_RETENTION_DAYS": 2}
    ).start()
    wait_until(lambda: pruned)
    assert abs(pruned[0] - (utcnow() - timedelta(days=2))) < timedelta(minutes=1)


def test_the_relay_reports_the_backlog_and_the_age_of_its_oldest_row(config):
    engine = make_engine(config["DATABASE_URL"])
    store = Store(engine, "orders", relay=None)
    with store.transaction() as tx:
        tx.emit(order_created("o-7"))
    down = OutboxRelay(engine, "orders", publish=lambda row: (_ for _ in ()).throw(ConnectionError("broker down")))
    down.publish_pending(older_than=timedelta(seconds=-1))
    labels = {"service": "orders"}
    assert REGISTRY.get_sample_value("kernodeck_outbox_pending", labels) == 1
    assert 0 < REGISTRY.get_sample_value("kernodeck_outbox_oldest_pending_age_seconds", labels) < 60
    OutboxRelay(engine, "orders", publish=lambda row: None).publish_pending(older_than=timedelta(seconds=-1))
    assert REGISTRY.get_sample_value("kernodeck_outbox_pending", labels) == 0
    assert REGISTRY.get_sample_value("kernodeck_outbox_oldest_pending_age_seconds", labels) == 0
    engine.dispose()


@pytest.fixture(params=["postgresql", "sqlite"])
def outbox_engine(request, tmp_path):
    """An engine on a database holding the kit's tables: PostgreSQL, then SQLite."""
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_database")()
    else:
        url = f"sqlite:///{tmp_path / 'kit.db'}"
        SQLModel.metadata.create_all(make_engine(url), tables=[OutboxMessage.__table__, ProcessedEvent.__table__])
    engine = make_engine(url)
    yield engine
    engine.dispose()


def test_a_transactions_events_are_written_in_the_order_emitted_each_with_its_id(outbox_engine):
    store = Store(outbox_engine, "orders", relay=None)
    with store.transaction() as tx:
        tx.emit(order_created("before"))
    with store.transaction() as tx:
        for n in range(50):
            tx.emit(order_created(f"o-{n}"))
    with Session(outbox_engine) as session:
        rows = session.exec(select(OutboxMessage).order_by(OutboxMessage.id)).all()
    assert [json.loads(row.payload)["order_id"] for row in rows] == ["before", *(f"o-{n}" for n in range(50))]
    assert [row.id for row in rows[1:]] == [emitted.id for emitted in tx.emitted]
    assert {(row.source, row.event_type, row.attempts, row.sent_at) for row in rows} == {
        ("orders", "order_created", 0, None)
    }
    assert len({row.created_at for row in rows[1:]}) == 1  # the transaction's time, for the relay's age


def test_a_transaction_emitting_more_events_than_one_insert_holds_gets_every_id(outbox_engine, monkeypatch):
    # The insert goes in pages of this many bound values (SQLite builds before 3.32 allow 999): 7 rows a page.
    monkeypatch.setattr(outbox_engine.dialect, "insertmanyvalues_max_parameters", 42)
    store = Store(outbox_engine, "orders", relay=None)
    with store.transaction() as tx:
        for n in range(50):
            tx.emit(order_created(f"o-{n}"))
    with Session(outbox_engine) as session:
        ids = session.exec(select(OutboxMessage.id).order_by(OutboxMessage.id)).all()
    assert [emitted.id for emitted in tx.emitted] == ids and len(ids) == 50


def test_a_transaction_that_fails_writes_none_of_its_events(outbox_engine):
    store = Store(outbox_engine, "orders", relay=None)
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.emit(order_created("o-1"))
        raise RuntimeError("the state change failed")
    with Session(outbox_engine) as session:
        assert session.exec(select(OutboxMessage)).all() == []
