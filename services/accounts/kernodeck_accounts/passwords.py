"""argon2id password hashing in a bounded pool of its own, so that a burst of registrations or
logins never takes the workers or the CPU that every other request needs."""

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager

from argon2 import PasswordHasher, Type
from argon2.exceptions import VerificationError

from kernodeck_accounts.hashing_threads import HashingThreads
from kernodeck_contracts.errors import ErrorCode, ServiceError


def busy(retry_after: int) -> ServiceError:
    return ServiceError(
        ErrorCode.SERVICE_UNAVAILABLE,
        "too many passwords are being checked; try again shortly",
        retry_after=retry_after,
    )


class Passwords:
    """Hashes run on `threads` OS threads of their own, at `niceness` (19 the lowest priority): they give
    way to everything else on the machine. At most `max_jobs` requests
    hold a job at once (each holds a service worker while it waits), and one is admitted only while its
    expected wait (the jobs ahead of it, at the recent pace) stays within `max_wait_s`: beyond either,
    `admitted()` refuses at once with 503 and Retry-After instead of answering late."""

    def __init__(
        self,
        time_cost: int,
        memory_cost_kib: int,
        parallelism: int,
        threads: int = 1,
        max_jobs: int = 4,
        max_wait_s: float = 1.5,
        niceness: int = 10,
    ):
        self._hasher = PasswordHasher(
            time_cost=time_cost, memory_cost=memory_cost_kib, parallelism=parallelism, type=Type.ID
        )
        self._threads = HashingThreads(threads, niceness)
        self._thread_count, self._max_jobs, self._max_wait_s = threads, max_jobs, max_wait_s
        self._jobs = 0
        started = time.monotonic()
        # Checked when the email is unknown, so that answer costs as long as a wrong password.
        self._dummy_hash = self._hasher.hash(secrets.token_urlsafe(16))
        self._pace_s = time.monotonic() - started  # seconds per hash, lately

    @contextmanager
    def admitted(self) -> Iterator[None]:
        """Hold a place for the hashing of one request, or raise `busy`."""
        waits = self._jobs // self._thread_count  # rounds of jobs to finish before this one starts
        expected_s = (waits + 1) * self._pace_s
        if self._jobs >= self._max_jobs or (waits and expected_s > self._max_wait_s):
            raise busy(max(1, round(expected_s)))
        self._jobs += 1
        try:
            yield
        finally:
            self._jobs -= 1

    def hash(self, password: str) -> str:
        return self._run(self._hasher.hash, password)

    def verify(self, password_hash: str | None, password: str) -> bool:
        """Whether `password` matches; with no hash, False after the same work."""
        try:
            self._run(self._hasher.verify, password_hash or self._dummy_hash, password)
        except VerificationError:
            return False
        return password_hash is not None

    def needs_rehash(self, password_hash: str) -> bool:
        """True when the hash was made with other parameters than the current ones."""
        return self._hasher.check_needs_rehash(password_hash)

    def _run(self, work, *args):
        return self._threads.run(self._timed, work, *args)

    def _timed(self, work, *args):
        """On a hashing thread: the work, its time folded into the pace (a loaded machine admits fewer jobs)."""
        started = time.monotonic()
        try:
            return work(*args)
        finally:
            took = time.monotonic() - started
            # Slower at once, faster gradually: a machine that slows down admits fewer jobs right away.
            self._pace_s = max(took, 0.8 * self._pace_s + 0.2 * took)
