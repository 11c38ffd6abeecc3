"""Transactional outbox: events are rows written with the state change.

`Store.transaction()` yields a `Tx`; events emitted on it are inserted in the
same database transaction. Right after the commit the same worker publishes
them (confirmed by the broker: kernodeck_kit.transport.publish) and marks them sent; `OutboxRelay.publish_pending`
retries whatever a crash or a broker outage left behind. On PostgreSQL the
worker holds its rows locked until they are marked sent and the relay passes
over locked rows, so a slow confirm does not have the relay publish them too;
the worker takes that lock while the broker confirms, after its events are
on their way, so that the lock's round trips do not delay them.

Events are published as mandatory: one that no queue is bound to receive
(its consumer has not declared its queue yet) comes back from the broker, and
its row stays unsent, is counted, and is tried again by the relay, rather
than being confirmed and lost.
"""

import json
import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import bindparam, delete, insert, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from kernodeck_contracts.events import Event
from kernodeck_kit import metrics
from kernodeck_kit.db import is_postgres
from kernodeck_kit.tables import OutboxMessage, ProcessedEvent
from kernodeck_kit.types import utcnow

log = logging.getLogger(__name__)


class OutboxRow(Protocol):
    """What publishing reads of an outbox row: an `OutboxMessage` read back, or an `Emitted` one just written."""

    id: int | None
    event_id: str
    source: str
    event_type: str
    payload: str
    attempts: int


@dataclass(slots=True)
class Emitted:
    """An event emitted in a transaction, as its outbox row is written, its id given once it is: a plain record,
    as a validated `OutboxMessage` for each of a block's hundreds of events is dear."""

    event_id: str
    source: str
    event_type: str
    payload: str
    attempts: int = 0
    id: int | None = None


PublishFn = Callable[[OutboxRow], None]  # raises Unroutable when no queue receives the row's event


class Unroutable(Exception):
    """The broker returned the event: no queue is bound to receive it (yet)."""


WhileConfirming = Callable[[], None]  # called once the rows are sent, before their confirms are awaited

# The statements every transaction and every consumed event runs, built once: building one (its clauses, its
# cache key) costs as much as running it. On the tables, not the ORM classes: no session holds these rows, and
# the ORM's bulk statements cost as much again on their way.
_OUTBOX, _PROCESSED = OutboxMessage.__table__, ProcessedEvent.__table__
_WRITE_OUTBOX = insert(_OUTBOX).returning(_OUTBOX.c.id, _OUTBOX.c.event_id)
_RECORD_PROCESSED = {  # by the dialect's name, for its ON CONFLICT
    name: dialect.insert(_PROCESSED).on_conflict_do_nothing().returning(_PROCESSED.c.event_id)
    for name, dialect in (("postgresql", postgresql), ("sqlite", sqlite))
}
_MARK_SENT = (
    update(_OUTBOX).where(_OUTBOX.c.id.in_(bindparam("ids", expanding=True))).values(sent_at=bindparam("sent_at"))
)
_LOCK_UNSENT = (  # PostgreSQL's, see OutboxRelay._lock_unsent
    select(_OUTBOX.c.id, func.set_config("synchronous_commit", "off", True))
    .where(_OUTBOX.c.id.in_(bindparam("ids", expanding=True)), _OUTBOX.c.sent_at.is_(None))
    .with_for_update(skip_locked=True)
)


@dataclass
class Published:
    """What became of a batch of rows: confirmed by the broker, returned as unroutable, or failed (not known
    to have reached the broker)."""

    confirmed: list[OutboxRow] = field(default_factory=list)
    unroutable: list[OutboxRow] = field(default_factory=list)
    failed: list[OutboxRow] = field(default_factory=list)

    def only(self, rows: list[OutboxRow]) -> "Published":
        ids = {row.id for row in rows}
        return Published(
            *([row for row in part if row.id in ids] for part in (self.confirmed, self.unroutable, self.failed))
        )


def consumer_key(event_type: type[Event]) -> str:
    """What a service's processed_events knows the consumer of `event_type` by: `<source>.<type>` (a service
    has one consumer per event class)."""
    return f"{event_type.source}.{event_type.type}"


class Tx:
    """One database transaction, with the outbox and the inbox at hand."""

    def __init__(self, session: Session, source: str):
        self.session = session
        self.source = source
        self.emitted: list[Emitted] = []

    def emit(self, event: Event) -> None:
        if event.source != self.source:
            raise ValueError(f"{self.source} cannot emit {event.source}.{event.type}")
        self.emitted.append(Emitted(event.event_id, event.source, event.type, json.dumps(event.to_message())))

    def write_emitted(self) -> None:
        """Inserts the emitted events' rows as the transaction ends, in the order they were emitted, and gives
        each its id: one statement returns them (many parameter sets, sent as one INSERT of many VALUES)."""
        if not self.emitted:
            return
        now = utcnow()
        rows = [
            {
                "event_id": row.event_id,
                "source": row.source,
                "event_type": row.event_type,
                "payload": row.payload,
                "created_at": now,
                "attempts": row.attempts,
            }
            for row in self.emitted
        ]
        ids = dict((event_id, row_id) for row_id, event_id in self.session.execute(_WRITE_OUTBOX, rows))
        for row in self.emitted:
            row.id = ids[row.event_id]

    def first_delivery(self, consumer: str, event_id: str) -> bool:
        """Record `event_id` for `consumer`; False when it was applied before.

        One insert that does nothing on the primary key's conflict: a second
        delivery racing the first waits for its transaction and, once that
        commits, finds the row and is told so, rather than failing.
        """
        return event_id in self.first_deliveries(consumer, [event_id])

    def first_deliveries(self, consumer: str, event_ids: list[str]) -> set[str]:
        """Record each of `event_ids` for `consumer` in one insert, as first_delivery records one; those not
        applied before."""
        if not event_ids:
            return set()
        now = utcnow()
        rows = [{"consumer": consumer, "event_id": event_id, "processed_at": now} for event_id in set(event_ids)]
        # Many parameter sets to one statement, not one statement of many VALUES: SQLAlchemy compiles that anew
        # for every batch size (tens of milliseconds for a block's events), this one once.
        record = _RECORD_PROCESSED[self.session.get_bind().dialect.name]
        return set(self.session.execute(record, rows).scalars())


class OutboxRelay:
    def __init__(self, engine: Engine, service: str, publish: PublishFn):
        self.engine = engine
        self.service = service
        self.publish = publish

    def publish_rows(self, rows: list[OutboxRow]) -> None:
        """Publish rows just committed by this worker and mark them sent (on PostgreSQL those it could lock)."""
        with Session(self.engine) as session:
            lock = _RowLock(lambda: self._lock_unsent(session, rows)) if is_postgres(self.engine) else None
            self._send(session, rows, lock)

    @staticmethod
    def _lock_unsent(session: Session, rows: list[OutboxRow]) -> list[OutboxRow]:
        """Those of `rows` not sent yet, locked until they are marked sent: the relay (SKIP LOCKED) passes over
        them while the broker confirms them, and those it holds or has sent already are left to it (the worker
        has published them too, which idempotent consumers ignore: the relay takes only rows older than its
        interval, which a worker's rows are only after a transaction that long).

        Losing the mark in a crash only means the relay publishes a row again, which idempotent consumers ignore:
        the commit need not wait for the WAL flush, synchronous_commit is off for it, set in the same round trip.
        """
        locked = {row_id for row_id, _ in session.execute(_LOCK_UNSENT, {"ids": [row.id for row in rows]})}
        return [row for row in rows if row.id in locked]

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

    def _send(self, session: Session, rows: list[OutboxRow], lock: "_RowLock | None" = None) -> int:
        """Publish `rows` and record what became of them; with a `lock`, of those it locked only."""
        published = self._publish(rows, lock) if rows else Published()
        if lock is not None:
            published = published.only(lock.rows())
        for row in published.unroutable:
            # No queue receives it (yet): the broker is fine, the other rows went.
            metrics.EVENTS_UNROUTABLE.labels(self.service, row.event_type).inc()
            log.warning("outbox event unroutable", extra={"event_type": row.event_type, "outbox_id": row.id})
            self._count_attempt(session, row)
        if published.failed:
            metrics.PUBLISH_FAILURES.labels(self.service).inc()
            log.warning("outbox publish failed", extra={"events": len(published.failed)})
            for row in published.failed:
                self._count_attempt(session, row)
        for row in published.confirmed:
            metrics.EVENTS_PUBLISHED.labels(self.service, row.event_type).inc()
        if published.confirmed:
            sent_ids = [row.id for row in published.confirmed]
            session.execute(_MARK_SENT, {"ids": sent_ids, "sent_at": utcnow()})
        session.commit()
        return len(published.confirmed)

    def _publish(self, rows: list[OutboxRow], while_confirming: WhileConfirming | None = None) -> Published:
        """All at once when the publisher can (AmqpPublisher.many, `while_confirming` called while the broker
        confirms), else one by one after `while_confirming`, stopping at a failure (the broker is likely down: the
        relay keeps their order when it tries again)."""
        many = getattr(self.publish, "many", None)
        if many is not None:
            try:
                return many(rows, while_confirming)
            except Exception:
                return Published(failed=list(rows))
        if while_confirming is not None:
            while_confirming()
        published = Published()
        for row in rows:
            try:
                self.publish(row)
            except Unroutable:
                published.unroutable.append(row)
                continue
            except Exception:
                published.failed.append(row)
                break
            published.confirmed.append(row)
        return published

    @staticmethod
    def _count_attempt(session: Session, row: OutboxRow) -> None:
        session.execute(update(OutboxMessage).where(OutboxMessage.id == row.id).values(attempts=row.attempts + 1))


class _RowLock:
    """A worker's lock on the rows it publishes, taken once (called by the publisher while the broker confirms,
    or by `rows()` when the publisher never got that far); `rows()`: those locked, or what the lock raised."""

    def __init__(self, take: Callable[[], list[OutboxRow]]):
        self._take = take
        self._locked: list[OutboxRow] | None = None
        self._error: Exception | None = None

    def __call__(self) -> None:
        if self._locked is None and self._error is None:
            try:
                self._locked = self._take()
            except Exception as error:  # not the broker's: raised by rows(), once the publisher is done
                self._error = error

    def rows(self) -> list[OutboxRow]:
        self()
        if self._error is not None:
            raise self._error
        return self._locked


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
            tx.write_emitted()
            session.commit()
        if tx.emitted and self.relay is not None:
            try:
                self.relay.publish_rows(tx.emitted)
            except Exception:
                # Committed already: the relay will publish these rows.
                log.exception("immediate outbox publish failed")

    @contextmanager
    def consume(self, event: Event, key: str | None = None) -> Iterator[Tx | None]:
        """A transaction for applying `event` once: yields None on a redelivery. Its consumer is known by
        `consumer_key` of the event's class, or by `key`, a spelling stored before the kit derived them."""
        with self.consume_each([event], key) as (tx, fresh):
            yield tx if fresh else None

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
    def consume_each(self, events: list[Event], key: str | None = None) -> Iterator[tuple[Tx, list[Event]]]:
        """One transaction for applying `events` once each: yields it with those not applied before, in order
        (the consumer of each known as in `consume`)."""
        keys = [key or consumer_key(type(event)) for event in events]
        ids: dict[str, list[str]] = defaultdict(list)
        for consumer, event in zip(keys, events, strict=True):
            ids[consumer].append(event.event_id)
        with self.transaction() as tx:
            first = {
                (consumer, event_id) for consumer in ids for event_id in tx.first_deliveries(consumer, ids[consumer])
            }
            fresh, applied = [], Counter()
            for consumer, event in zip(keys, events, strict=True):  # an event twice in the batch is applied once
                if (consumer, event.event_id) in first:
                    first.discard((consumer, event.event_id))
                    fresh.append(event)
                    applied[consumer] += 1
            yield tx, fresh
            for consumer, received in ids.items():
                metrics.EVENTS_CONSUMED.labels(self.source, consumer).inc(applied[consumer])
                metrics.EVENTS_DUPLICATE.labels(self.source, consumer).inc(len(received) - applied[consumer])

    @contextmanager
    def read(self) -> Iterator[Session]:
        with Session(self.engine) as session:
            yield session
