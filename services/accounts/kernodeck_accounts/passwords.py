"""argon2id password hashing, off the event loop."""

import secrets

from argon2 import PasswordHasher, Type
from argon2.exceptions import VerificationError
from eventlet import tpool


class Passwords:
    """Hashing runs in eventlet's OS-thread pool: seconds of CPU across a
    burst of logins would otherwise stall every other green thread."""

    def __init__(self, time_cost: int, memory_cost_kib: int, parallelism: int):
        self._hasher = PasswordHasher(
            time_cost=time_cost, memory_cost=memory_cost_kib, parallelism=parallelism, type=Type.ID
        )
        # Checked when the email is unknown, so that answer costs as long as a wrong password.
        self._dummy_hash = self._hasher.hash(secrets.token_urlsafe(16))

    def hash(self, password: str) -> str:
        return tpool.execute(self._hasher.hash, password)

    def verify(self, password_hash: str | None, password: str) -> bool:
        """Whether `password` matches; with no hash, False after the same work."""
        try:
            tpool.execute(self._hasher.verify, password_hash or self._dummy_hash, password)
        except VerificationError:
            return False
        return password_hash is not None

    def needs_rehash(self, password_hash: str) -> bool:
        """True when the hash was made with other parameters than the current ones."""
        return self._hasher.check_needs_rehash(password_hash)
