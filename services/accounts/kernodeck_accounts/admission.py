"""Who hashes next: a queue in front of the password-hashing threads that lets a request wait its turn
(up to a bound) instead of refusing it, fair between clients, with separate budgets for logins and
registrations.

- **Two kinds, two budgets.** Logins and registrations wait in queues of their own, each with its longest
  wait and its most waiting requests; when both have requests waiting, a free thread takes them in turn, so
  a flood of one kind leaves the other at least half of the threads.
- **Fair between clients.** Within a kind a request is placed by (standing, rank, arrival): a client's n-th
  request waiting or hashing is ranked n, so its second waits behind every other client's first. Requests
  from clients each sending one at a time are served in arrival order; a client sending many at once gets
  its turns interleaved with the others'. Standing puts first a client whose password checked out lately
  (the login use case says which): a flood of new addresses, each within its free failures, queues behind
  the customers the service knows.
- **Waiting, up to a bound.** A request's wait is estimated from the requests ahead of it, the other kind's
  share and the recent pace of a hash. While the last request in the fair order would wait longer than the
  kind's bound (or more requests wait than the kind allows), that last one is refused with 503 and
  Retry-After: the new request itself, or a request a fairer one has just pushed out. A request never waits
  longer than the bound: if its turn has not come by then (the machine slowed), it is refused then.

Every request a caller waits for holds a service worker (AccountsSettings keeps workers for the rest).
All of this runs in the service's green threads, one at a time: no lock is needed.
"""

import bisect
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import count

from eventlet.event import Event
from prometheus_client import Counter as Counted
from prometheus_client import Gauge, Histogram

from kernodeck_accounts.domain import Standing
from kernodeck_contracts.errors import ErrorCode, ServiceError

WAITING = Gauge("kernodeck_accounts_password_queue_waiting", "Requests waiting for a password hash", ["kind"])
WAITED = Histogram(
    "kernodeck_accounts_password_queue_wait_seconds",
    "How long a request waited for its password hash to start",
    ["kind"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15),
)
REFUSED = Counted(
    "kernodeck_accounts_password_queue_refused_total",
    "Requests refused with 503 by the password queue: on arrival (full), pushed out by a fairer request,"
    " or not started within the wait bound",
    ["kind", "reason"],
)


class Kind(StrEnum):
    LOGIN = "login"
    REGISTRATION = "registration"


@dataclass(frozen=True)
class Budget:
    max_wait_s: float
    max_waiting: int


def busy(retry_after: float) -> ServiceError:
    return ServiceError(
        ErrorCode.SERVICE_UNAVAILABLE,
        "too many passwords are being checked; try again shortly",
        retry_after=max(1, math.ceil(retry_after)),
    )


@dataclass(eq=False)
class _Ticket:
    kind: Kind
    client: str
    key: tuple  # (standing, rank, arrival): the fair order
    arrived: float
    turn: Event = field(default_factory=Event)
    started: bool = False
    refused_after: float | None = None  # Retry-After of a request pushed out while waiting

    def __lt__(self, other: "_Ticket") -> bool:
        return self.key < other.key


class HashingQueue:
    """Turns on `slots` hashing threads for requests of both kinds; `pace()`: the recent seconds of one hash."""

    def __init__(self, slots: int, budgets: dict[Kind, Budget], pace: Callable[[], float], clock=time.monotonic):
        self._slots, self._budgets, self._pace, self._clock = slots, budgets, pace, clock
        self._waiting: dict[Kind, list[_Ticket]] = {kind: [] for kind in Kind}
        self._held: Counter[tuple[Kind, str]] = Counter()  # requests waiting or hashing, by kind and client
        self._running = 0
        self._last: Kind | None = None
        self._arrivals = count()

    @contextmanager
    def turn(self, kind: Kind, client: str, standing: Standing = Standing.OTHER) -> Iterator[None]:
        """Wait for a hashing thread (fairly, up to the kind's bound) and hold it for the block; or raise
        503 `busy` with Retry-After."""
        ticket = _Ticket(kind, client, (standing, self._held[kind, client], next(self._arrivals)), self._clock())
        self._held[kind, client] += 1
        try:
            self._queue(ticket)
            self._wait(ticket)
            yield
        finally:
            self._leave(ticket)

    def waiting(self, kind: Kind) -> int:
        return len(self._waiting[kind])

    def _queue(self, ticket: _Ticket) -> None:
        if self._running < self._slots and not any(self._waiting.values()):
            self._start(ticket)
            return
        queue = self._waiting[ticket.kind]
        bisect.insort(queue, ticket)
        budget = self._budgets[ticket.kind]
        while queue and (
            len(queue) > budget.max_waiting or self._expected_wait(ticket.kind, len(queue) - 1) > budget.max_wait_s
        ):
            last = queue.pop()
            if last is ticket:
                REFUSED.labels(ticket.kind, "full").inc()
                raise busy(self._expected_wait(ticket.kind, len(queue)))
            last.refused_after = self._expected_wait(ticket.kind, len(queue))
            last.turn.send()
        WAITING.labels(ticket.kind).set(len(queue))

    def _wait(self, ticket: _Ticket) -> None:
        if ticket.started:
            return
        ticket.turn.wait(max(0.0, ticket.arrived + self._budgets[ticket.kind].max_wait_s - self._clock()))
        if ticket.started:
            return
        if ticket.refused_after is not None:
            REFUSED.labels(ticket.kind, "pushed_out").inc()
            raise busy(ticket.refused_after)
        self._waiting[ticket.kind].remove(ticket)
        WAITING.labels(ticket.kind).set(len(self._waiting[ticket.kind]))
        REFUSED.labels(ticket.kind, "waited_too_long").inc()
        raise busy(self._budgets[ticket.kind].max_wait_s)

    def _expected_wait(self, kind: Kind, position: int) -> float:
        """Seconds until the request at `position` in `kind`'s queue starts, when every thread is busy: the
        requests ahead of it and as many of the other kind's in between (they alternate), a pace each."""
        other = len(self._waiting[Kind.REGISTRATION if kind is Kind.LOGIN else Kind.LOGIN])
        starts_before = position + min(position + 1, other)
        return (starts_before // self._slots + 1) * self._pace()

    def _start(self, ticket: _Ticket) -> None:
        ticket.started = True
        self._running += 1
        self._last = ticket.kind
        WAITED.labels(ticket.kind).observe(self._clock() - ticket.arrived)

    def _leave(self, ticket: _Ticket) -> None:
        self._held[ticket.kind, ticket.client] -= 1
        if not self._held[ticket.kind, ticket.client]:
            del self._held[ticket.kind, ticket.client]
        if ticket.started:
            self._running -= 1
        elif ticket in self._waiting[ticket.kind]:  # its green thread was killed while it waited
            self._waiting[ticket.kind].remove(ticket)
        self._dispatch()

    def _dispatch(self) -> None:
        """Start waiting requests while threads are free, the kinds taking turns."""
        while self._running < self._slots:
            ready = [kind for kind in Kind if self._waiting[kind]]
            if not ready:
                return
            kind = next((k for k in ready if k is not self._last), ready[0])
            ticket = self._waiting[kind].pop(0)
            WAITING.labels(kind).set(len(self._waiting[kind]))
            self._start(ticket)
            ticket.turn.send()
