"""Units of work: what a use case reads and changes in one transaction, and the events it emits with it.

A service's use cases take their unit (the service's repositories and `emit`) from `Units`:
`SqlUnits` opens one per database transaction of the service's Store (a `SqlUnit`: events leave through
the outbox),
`MemoryUnits` one over plain objects, so that tests run the same use cases, rules and all, in
milliseconds. Both have `consume(event)`, which gives None for an event applied before, and
`consume_each(events)`, one unit for events that came together with those not applied before; the consumer
of an event is known by its class (`consumer_key`), or by the `key` a service stored before that.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from copy import deepcopy
from typing import Generic, Protocol, TypeVar

from sqlmodel import Session

from kernodeck_contracts.events import Event
from kernodeck_kit.outbox import Store, Tx, consumer_key

U = TypeVar("U")
S = TypeVar("S")


class Units(Protocol[U]):
    def transaction(self) -> Iterator[U]: ...

    def consume(self, event: Event, key: str | None = None) -> Iterator[U | None]: ...

    def consume_each(self, events: list[Event], key: str | None = None) -> Iterator[tuple[U, list[Event]]]: ...


class SqlUnit:
    """The base of a service's unit on one database transaction: its `session`, and `emit`, which writes the
    event into the outbox in that same transaction."""

    def __init__(self, tx: Tx):
        self.session: Session = tx.session
        self.emit: Callable[[Event], None] = tx.emit

    def done(self) -> None:
        """The unit's work ended without an error: write what it kept to write together (many rows in one
        statement), before the commit."""


class SqlUnits(Generic[U]):
    """Units on the service's database: `unit(tx)` builds the service's unit on one transaction."""

    def __init__(self, store: Store, unit: Callable[[Tx], U]):
        self.store = store
        self.unit = unit

    @contextmanager
    def transaction(self) -> Iterator[U]:
        with self.store.transaction() as tx:
            unit = self.unit(tx)
            yield unit
            unit.done()

    @contextmanager
    def consume(self, event: Event, key: str | None = None) -> Iterator[U | None]:
        with self.store.consume(event, key) as tx:
            unit = None if tx is None else self.unit(tx)
            yield unit
            if unit is not None:
                unit.done()

    @contextmanager
    def consume_each(self, events: list[Event], key: str | None = None) -> Iterator[tuple[U, list[Event]]]:
        with self.store.consume_each(events, key) as (tx, fresh):
            unit = self.unit(tx)
            yield unit, fresh
            unit.done()


class MemoryUnits(Generic[S, U]):
    """Units over `state`, the service's tables as plain objects, for tests.

    `unit(state, emit)` builds the service's unit. A transaction works on a copy of the state, kept only
    when it ends without an error, as a database transaction is; its events are then added to `emitted`.
    """

    def __init__(self, source: str, state: S, unit: Callable[[S, Callable[[Event], None]], U]):
        self.source = source
        self.state = state
        self.unit = unit
        self.emitted: list[Event] = []
        self._applied: set[tuple[str, str]] = set()

    @contextmanager
    def transaction(self) -> Iterator[U]:
        working, pending = deepcopy(self.state), []

        def emit(event: Event) -> None:
            if event.source != self.source:
                raise ValueError(f"{self.source} cannot emit {event.source}.{event.type}")
            pending.append(event)

        yield self.unit(working, emit)
        self.state = working
        self.emitted.extend(pending)

    @contextmanager
    def consume(self, event: Event, key: str | None = None) -> Iterator[U | None]:
        applied = (key or consumer_key(type(event)), event.event_id)
        if applied in self._applied:
            yield None
            return
        with self.transaction() as unit:
            yield unit
        self._applied.add(applied)

    @contextmanager
    def consume_each(self, events: list[Event], key: str | None = None) -> Iterator[tuple[U, list[Event]]]:
        fresh, applied = [], set()
        for event in events:
            once = (key or consumer_key(type(event)), event.event_id)
            if once not in self._applied and once not in applied:
                fresh.append(event)
                applied.add(once)
        with self.transaction() as unit:
            yield unit, fresh
        self._applied |= applied

    def of(self, event_type: type[Event]) -> list[Event]:
        """The events of this type emitted so far, oldest first."""
        return [event for event in self.emitted if isinstance(event, event_type)]
