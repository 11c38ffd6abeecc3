"""argon2id password hashing on threads of its own, taken in turns (admission.py), so that a burst of
registrations or logins never takes the workers or the CPU that every other request needs."""

import secrets
import time
from contextlib import AbstractContextManager

from argon2 import PasswordHasher, Type
from argon2.exceptions import VerificationError

from kernodeck_accounts.admission import Budget, HashingQueue, Kind
from kernodeck_accounts.config import AccountsPolicy
from kernodeck_accounts.domain import Standing
from kernodeck_accounts.hashing_threads import HashingThreads


class Passwords:
    """Hashes run on `threads` OS threads of their own, at `niceness` (19 the lowest priority): they give
    way to everything else on the machine. A request takes its turn on them through `turn()`
    (admission.HashingQueue: fair between clients, logins and registrations each within their `budgets`),
    waiting up to its kind's bound, else refused with 503 and Retry-After."""

    def __init__(
        self,
        time_cost: int,
        memory_cost_kib: int,
        parallelism: int,
        threads: int = 1,
        budgets: dict[Kind, Budget] | None = None,
        niceness: int = 10,
    ):
        self._hasher = PasswordHasher(
            time_cost=time_cost, memory_cost=memory_cost_kib, parallelism=parallelism, type=Type.ID
        )
        self._threads = HashingThreads(threads, niceness)
        started = time.monotonic()
        # Checked when the email is unknown, so that answer costs as long as a wrong password.
        self._dummy_hash = self._hasher.hash(secrets.token_urlsafe(16))
        self._pace_s = time.monotonic() - started  # seconds per hash, lately
        budgets = budgets or AccountsPolicy().password_budgets  # the policy's defaults
        self._queue = HashingQueue(threads, budgets, lambda: self._pace_s)

    def turn(self, kind: Kind, client: str, standing: Standing = Standing.OTHER) -> AbstractContextManager[None]:
        """Wait for this request's turn to hash (fairly, within its kind's budget) and hold it for the block;
        or raise 503 `service_unavailable` with Retry-After."""
        return self._queue.turn(kind, client, standing)

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
