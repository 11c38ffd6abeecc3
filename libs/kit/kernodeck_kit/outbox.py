"""Transactional outbox: events are rows written with the state change.

`Store.transaction()` yields a `Tx`; events emitted on it are inserted in the
same database transaction. Right after the commit the same worker publishes
them (publisher confirms) and marks them sent; `OutboxRelay.publish_pending`
retries whatever a crash or a broker outage left behind.

Events are published as mandatory: one that no queue is bound to receive
(its consumer has not declared its queue yet) comes back from the broker, and
its row stays unsent, is counted, and is tried again by the relay, rather
than being confirmed and lost.
"""

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from kombu import Exchange
from nameko.amqp.publish import Publisher, UndeliverableMessage
from sqlalchemy import delete, text, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from kernodeck_contracts.events import Event
from kernodeck_kit import metrics
from kernodeck_kit.db import insert_for, is_postgres
from kernodeck_kit.tables import OutboxMessage, ProcessedEvent
from kernodeck_kit.types import utcnow

log = logging.getLogger(__name__)

PublishFn = Callable[[OutboxMessage], None]


def amqp_publisher(amqp_uri: str) -> PublishFn:
    """Publish an outbox row the way nameko's EventDispatcher does, but mandatory: UndeliverableMessage when
    no queue receives it."""
    publisher = Publisher(amqp_uri, serializer="json", use_confirms=True, mandatory=True)

    def publish(row: OutboxMessage) -> None:
        exchange = Exchange(f"{row.source}.events", type="topic", durable=True, delivery_mode=2)
        publisher.publish(
            json.loads(row.payload),
            exchange=exchange,
            routing_key=row.event_type,
            declare=[exchange],
            retry=True,
            retry_policy={"max_retries": 2, "interval_start": 0.1, "interval_step": 0.2},
        )

    return publish


class Tx:
    """One database transaction, with the outbox and the inbox at hand."""

    def __init__(self, session: Session, source: str):
        self.session = session
        self.source = source
        self.emitted: list[OutboxMessage] = []

    def emit(self, event: Event) -> None:
        if event.source != self.source:
            raise ValueError(f"{self.source} cannot emit {event.source}.{event.type}")
        row = OutboxMessage(
            event_id=event.event_id,
            source=event.source,
            event_type=event.type,
            payload=json.dumps(event.to_message()),
        )
        self.session.add(row)
        self.emitted.append(row)

    def first_delivery(self, consumer: str, event_id: str) -> bool:
        """Record `event_id` for `consumer`; False when it was applied before.

        One insert that does nothing on the primary key's conflict: a second
        delivery racing the first waits for its transaction and, once that
        commits, finds the row and is told so, rather than failing.
        """
        record = (
            insert_for(self.session, ProcessedEvent)
            .values(consumer=consumer, event_id=event_id, processed_at=utcnow())
            .on_conflict_do_nothing()
            .returning(ProcessedEvent.event_id)
        )
        return self.session.execute(record).first() is not None


class OutboxRelay:
    def __init__(self, engine: Engine, service: str, publish: PublishFn):
        self.engine = engine
        self.service = service
        self.publish = publish

    def publish_rows(self, rows: list[OutboxMessage]) -> None:
        """Publish rows just committed by this worker and mark them sent."""
        with Session(self.engine) as session:
            if is_postgres(self.engine):
                # Losing this mark in a crash only means the relay publishes the
                # row again, which idempotent consumers ignore: no need to wait
                # for the WAL flush on the request's path.
                session.execute(text("SET LOCAL synchronous_commit TO OFF"))
            self._send(session, rows)

    def publish_pending(self, older_than: timedelta, batch: int = 200) -> int:
        """Publish rows the happy path did not; returns how many went out.

        The rows tried least come first, so that a few events nobody receives yet cannot hold back the rest.
        """
        with Session(self.engine) as session:
            query = (
                select(OutboxMessage)
                .where(OutboxMessage.sent_at.is_(None), OutboxMessage.created_at < utcnow() - older_than)
                .order_by(OutboxMessage.attempts, OutboxMessage.id)
                .limit(batch)
            )
            if is_postgres(self.engine):
                query = query.with_for_update(skip_locked=True)
            rows = session.exec(query).all()
            sent = self._send(session, rows)
            pending, oldest = session.exec(
                select(func.count(), func.min(OutboxMessage.created_at)).where(OutboxMessage.sent_at.is_(None))
            ).one()
            metrics.OUTBOX_PENDING.labels(self.service).set(pending)
            age = (utcnow() - oldest).total_seconds() if oldest is not None else 0
            metrics.OUTBOX_OLDEST_AGE.labels(self.service).set(age)
            return sent

    def prune(self, sent_before) -> int:
        """Forget rows the broker confirmed before `sent_before`; unsent rows are never removed."""
        with Session(self.engine) as session:
            removed = session.execute(
                delete(OutboxMessage).where(OutboxMessage.sent_at.is_not(None), OutboxMessage.sent_at < sent_before)
            ).rowcount
            session.commit()
            return removed

    def _send(self, session: Session, rows: list[OutboxMessage]) -> int:
        sent_ids = []
        for row in rows:
            try:
                self.publish(row)
            except UndeliverableMessage:
                # No queue receives it (yet): the broker is fine, the next rows may go.
                metrics.EVENTS_UNROUTABLE.labels(self.service, row.event_type).inc()
                log.warning("outbox event unroutable", extra={"event_type": row.event_type, "outbox_id": row.id})
                self._count_attempt(session, row)
                continue
            except Exception:
                metrics.PUBLISH_FAILURES.labels(self.service).inc()
                log.warning("outbox publish failed", extra={"event_type": row.event_type, "outbox_id": row.id})
                self._count_attempt(session, row)
                break  # the broker is likely down: keep order, let the relay retry
            sent_ids.append(row.id)
            metrics.EVENTS_PUBLISHED.labels(self.service, row.event_type).inc()
        if sent_ids:
            session.execute(update(OutboxMessage).where(OutboxMessage.id.in_(sent_ids)).values(sent_at=utcnow()))
        session.commit()
        return len(sent_ids)

    @staticmethod
    def _count_attempt(session: Session, row: OutboxMessage) -> None:
        session.execute(update(OutboxMessage).where(OutboxMessage.id == row.id).values(attempts=row.attempts + 1))


class Store:
    """A service's database: transactions whose events leave through the outbox."""

    def __init__(self, engine: Engine, source: str, relay: OutboxRelay | None):
        self.engine = engine
        self.source = source
        self.relay = relay

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        with Session(self.engine, expire_on_commit=False) as session:
            tx = Tx(session, self.source)
            yield tx
            session.commit()
        if tx.emitted and self.relay is not None:
            try:
                self.relay.publish_rows(tx.emitted)
            except Exception:
                # Committed already: the relay will publish these rows.
                log.exception("immediate outbox publish failed")

    @contextmanager
    def consume(self, consumer: str, event: Event) -> Iterator[Tx | None]:
        """A transaction for applying `event` once: yields None on a redelivery."""
        with self.transaction() as tx:
            if tx.first_delivery(consumer, event.event_id):
                yield tx
                metrics.EVENTS_CONSUMED.labels(self.source, consumer).inc()
            else:
                metrics.EVENTS_DUPLICATE.labels(self.source, consumer).inc()
                yield None

    def prune_processed(self, processed_before: datetime) -> int:
        """Forget which events were applied before `processed_before`. A delivery comes again only
        within minutes (a requeue, the relay's retry), so a retention of weeks keeps every consumer
        idempotent while the table stays bounded."""
        with Session(self.engine) as session:
            removed = session.execute(
                delete(ProcessedEvent).where(ProcessedEvent.processed_at < processed_before)
            ).rowcount
            session.commit()
        if removed:
            log.info("processed events pruned", extra={"removed": removed})
        return removed

    @contextmanager
    def consume_each(self, consumer: str, events: list[Event]) -> Iterator[tuple[Tx, list[Event]]]:
        """One transaction for applying `events` once each: yields it with those not applied before, in order."""
        with self.transaction() as tx:
            fresh = [event for event in events if tx.first_delivery(consumer, event.event_id)]
            yield tx, fresh
            metrics.EVENTS_CONSUMED.labels(self.source, consumer).inc(len(fresh))
            metrics.EVENTS_DUPLICATE.labels(self.source, consumer).inc(len(events) - len(fresh))

    @contextmanager
    def read(self) -> Iterator[Session]:
        with Session(self.engine) as session:
            yield session
