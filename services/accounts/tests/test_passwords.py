import os
import threading

import eventlet
import pytest
from argon2.profiles import RFC_9106_LOW_MEMORY
from eventlet import GreenPool, patcher, sleep

from kernodeck_accounts.admission import Budget, Kind
from kernodeck_accounts.config import AccountsPolicy
from kernodeck_accounts.passwords import Passwords
from kernodeck_contracts.errors import ServiceError

pytestmark = pytest.mark.unit

PASSWORD = "correct horse battery staple"


def production_passwords() -> Passwords:
    policy = AccountsPolicy()
    return Passwords(policy.argon2_time_cost, policy.argon2_memory_cost_kib, policy.argon2_parallelism)


def test_production_parameters_make_rfc_9106_argon2id_hashes():
    passwords = production_passwords()
    stored = passwords.hash(PASSWORD)
    profile = RFC_9106_LOW_MEMORY
    assert stored.startswith(f"$argon2id$v=19$m={profile.memory_cost},t={profile.time_cost},p={profile.parallelism}$")
    assert passwords.verify(stored, PASSWORD)
    assert not passwords.verify(stored, PASSWORD + " ")
    assert not passwords.needs_rehash(stored)


def test_hashes_are_salted():
    passwords = Passwords(1, 8, 1)
    assert passwords.hash(PASSWORD) != passwords.hash(PASSWORD)


def test_without_a_hash_nothing_verifies():
    assert not Passwords(1, 8, 1).verify(None, PASSWORD)


def test_a_hash_made_with_other_parameters_needs_a_rehash():
    cheap_hash = Passwords(1, 8, 1).hash(PASSWORD)
    passwords = production_passwords()
    assert passwords.verify(cheap_hash, PASSWORD)
    assert passwords.needs_rehash(cheap_hash)


def test_hashing_runs_on_its_own_low_priority_threads_while_green_threads_run_on(monkeypatch):
    passwords = Passwords(1, 8, 1, threads=2)
    seen = []

    def hash_slowly(self, password):
        seen.append((threading.current_thread().name, os.getpriority(os.PRIO_PROCESS, 0)))
        patcher.original("time").sleep(0.3)  # blocks this OS thread, as argon2 does
        return "hashed"

    monkeypatch.setattr(type(passwords._hasher), "hash", hash_slowly)
    ticks = []
    pool = GreenPool()
    pool.spawn(lambda: [ticks.append(sleep(0.01)) for _ in range(10)])
    results = [pool.spawn(passwords.hash, PASSWORD) for _ in range(2)]
    assert [result.wait() for result in results] == ["hashed", "hashed"]
    assert len(ticks) == 10
    assert {name for name, _ in seen} == {"password-hashing-0", "password-hashing-1"}
    assert all(niceness >= 10 for _, niceness in seen)


def test_an_error_in_the_hash_reaches_the_caller():
    with pytest.raises(UnicodeEncodeError):
        Passwords(1, 8, 1).hash("a lone \ud800 surrogate")


def test_the_queue_reckons_with_the_pace_of_the_hashes_it_measured():
    budgets = {kind: Budget(max_wait_s=2.0, max_waiting=8) for kind in Kind}
    passwords = Passwords(1, 8, 1, threads=1, budgets=budgets)
    passwords._pace_s = 0.9  # seconds a hash takes lately
    # A thread is free: taken whatever the pace. One waiting: starts by 0.9 s, a second by 1.8 s, a third
    # by 2.7 s, over 2 s.
    with passwords.turn(Kind.LOGIN, "a"):
        waiting = [eventlet.spawn(lambda n=n: passwords.turn(Kind.LOGIN, f"c{n}").__enter__()) for n in range(2)]
        eventlet.sleep(0)
        with pytest.raises(ServiceError) as refused, passwords.turn(Kind.LOGIN, "z"):
            pass
        assert (refused.value.code, refused.value.retry_after) == ("service_unavailable", 3)
        [each.kill() for each in waiting]
