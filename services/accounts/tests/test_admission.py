"""The password queue on both sides of each bound: the order requests start in, who is refused and when,
with green threads standing in for the service's workers and a fixed pace of a hash."""

import random

import eventlet
import pytest

from kernodeck_accounts.admission import Budget, HashingQueue, Kind
from kernodeck_accounts.domain import Standing
from kernodeck_contracts.errors import ServiceError

PACE = 0.02  # seconds a hash takes, as the queue reckons
ROOMY = Budget(max_wait_s=60, max_waiting=1000)


def queue(slots: int = 1, login: Budget = ROOMY, registration: Budget = ROOMY) -> HashingQueue:
    return HashingQueue(slots, {Kind.LOGIN: login, Kind.REGISTRATION: registration}, lambda: PACE)


class Requests:
    """Requests sent to one queue, each in a green thread of its own that hashes for `PACE` once it may."""

    def __init__(self, hashing: HashingQueue):
        self.hashing = hashing
        self.started: list[str] = []
        self.refused: dict[str, int] = {}  # name: Retry-After
        self.threads = []

    def send(self, name: str, client: str, kind: Kind = Kind.LOGIN, standing=Standing.OTHER, hold: float = PACE):
        def request():
            try:
                with self.hashing.turn(kind, client, standing):
                    self.started.append(name)
                    eventlet.sleep(hold)
            except ServiceError as busy:
                assert busy.code == "service_unavailable"
                self.refused[name] = busy.retry_after

        self.threads.append(eventlet.spawn(request))
        eventlet.sleep(0)  # it arrives now, before the next one is sent

    def finish(self) -> None:
        for thread in self.threads:
            thread.wait()


def test_one_request_at_a_time_from_each_client_is_served_in_arrival_order():
    requests = Requests(queue())
    names = [f"c{client}-{n}" for n in range(5) for client in range(10)]  # a burst of 50 from 10 clients
    for name in names:
        requests.send(name, name.split("-")[0])
    requests.finish()
    assert requests.started == names and requests.refused == {}


def test_a_client_sending_many_at_once_takes_turns_with_the_others():
    requests = Requests(queue())
    for n in range(4):
        requests.send(f"flood-{n}", "flood")
    requests.send("lan", "lan")
    requests.send("ann", "ann")
    requests.finish()
    # flood-0 had a free thread; while it hashes, flood's others rank behind each other client's first.
    assert requests.started == ["flood-0", "lan", "ann", "flood-1", "flood-2", "flood-3"]


def test_a_known_client_goes_ahead_of_every_other_waiting():
    requests = Requests(queue())
    for n in range(6):
        requests.send(f"new-{n}", f"198.51.100.{n}")
    requests.send("customer", "203.0.113.5", standing=Standing.KNOWN)
    requests.finish()
    assert requests.started[:2] == ["new-0", "customer"]


def test_past_the_most_waiting_the_newest_is_refused_at_once():
    requests = Requests(queue(login=Budget(max_wait_s=60, max_waiting=3)))
    for n in range(5):
        requests.send(f"r{n}", f"198.51.100.{n}")
    assert set(requests.refused) == {"r4"}  # r0 hashes, r1 to r3 wait, at once
    requests.finish()
    assert requests.started == ["r0", "r1", "r2", "r3"]


def test_one_whose_expected_wait_is_past_the_bound_is_refused_with_that_wait_as_retry_after():
    # A start every PACE: the n-th waiting starts after (n + 1) * PACE, here 0.02, 0.04, 0.06 s.
    requests = Requests(queue(login=Budget(max_wait_s=2.5 * PACE, max_waiting=100)))
    for n in range(4):
        requests.send(f"r{n}", f"198.51.100.{n}")
    assert requests.refused == {"r3": 1}
    requests.finish()
    assert requests.started == ["r0", "r1", "r2"]


def test_a_fairer_request_pushes_out_the_last_in_the_fair_order():
    requests = Requests(queue(login=Budget(max_wait_s=60, max_waiting=3)))
    for n in range(4):
        requests.send(f"flood-{n}", "flood")  # one hashing, three waiting: full
    requests.send("lan", "lan")
    eventlet.sleep(0)  # the pushed-out request hears it
    assert set(requests.refused) == {"flood-3"}
    requests.finish()
    assert requests.started == ["flood-0", "lan", "flood-1", "flood-2"]


def test_a_request_not_started_within_the_bound_is_refused_then_and_the_rest_go_on():
    hashing = queue(login=Budget(max_wait_s=1.0, max_waiting=10))
    requests = Requests(hashing)
    requests.send("slow", "a", hold=1.8)  # the machine slowed down: a hash takes 90 paces
    requests.send("waits", "b")
    eventlet.sleep(0.6)
    assert requests.refused == {} and hashing.waiting(Kind.LOGIN) == 1
    eventlet.sleep(0.7)
    assert requests.refused == {"waits": 1} and hashing.waiting(Kind.LOGIN) == 0
    requests.send("later", "c")
    requests.finish()
    assert requests.started == ["slow", "later"]


def test_logins_and_registrations_take_turns_and_each_has_its_own_budget():
    requests = Requests(queue(login=Budget(max_wait_s=60, max_waiting=2)))
    for n in range(4):
        requests.send(f"login-{n}", f"198.51.100.{n}")
    for n in range(3):
        requests.send(f"sign-up-{n}", f"192.0.2.{n}", kind=Kind.REGISTRATION)
    assert set(requests.refused) == {"login-3"}  # the logins' queue is full; the registrations' is not
    requests.finish()
    assert requests.started == ["login-0", "sign-up-0", "login-1", "sign-up-1", "login-2", "sign-up-2"]


def test_a_waiting_request_whose_worker_is_killed_leaves_the_queue():
    hashing = queue()
    requests = Requests(hashing)
    requests.send("first", "a", hold=0.05)
    requests.send("killed", "b")
    requests.threads.pop().kill()
    assert hashing.waiting(Kind.LOGIN) == 0
    requests.send("next", "b")
    requests.finish()
    assert requests.started == ["first", "next"]


@pytest.mark.parametrize("seed", range(5))
def test_every_request_starts_once_or_is_refused_once_never_both_never_neither(seed):
    chance = random.Random(seed)
    budget = Budget(max_wait_s=6 * PACE, max_waiting=8)
    requests = Requests(queue(slots=2, login=budget, registration=budget))
    names = [f"r{n}" for n in range(120)]
    for name in names:
        requests.send(
            name,
            f"198.51.100.{chance.randrange(12)}",
            kind=chance.choice(list(Kind)),
            standing=chance.choice(list(Standing)),
            hold=chance.uniform(0, 2 * PACE),
        )
        eventlet.sleep(chance.uniform(0, PACE / 2))
    requests.finish()
    assert len(requests.started) == len(set(requests.started))
    assert sorted(requests.started + list(requests.refused)) == sorted(names)
    assert requests.refused and requests.started  # both happened: the bounds were reached
