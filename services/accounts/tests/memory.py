"""The accounts' unit of work on plain objects: their use cases run here without a database."""

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from uuid import uuid4

from kernodeck_accounts.domain import Account, Forgotten, Registration, email_taken
from kernodeck_kit.memory import MemoryUnit
from kernodeck_kit.units import MemoryUnits


@dataclass
class StoredSession:
    account_id: str
    expires_at: datetime
    revoked_at: datetime | None = None


@dataclass
class AccountTables:
    accounts: dict[str, Account] = field(default_factory=dict)
    sessions: dict[str, StoredSession] = field(default_factory=dict)  # by token hash
    failures: list[tuple[str, str, datetime]] = field(default_factory=list)  # (email, client, at)
    registrations: list[tuple[str, str, datetime]] = field(default_factory=list)  # (client, network, at)
    known_clients: dict[str, datetime] = field(default_factory=dict)  # last success, by client


class MemoryAccounts(MemoryUnit[AccountTables]):
    def find_account(self, email_normalized: str) -> Account | None:
        return next((a for a in self.tables.accounts.values() if a.email_normalized == email_normalized), None)

    def get_account(self, account_id: str) -> Account | None:
        return self.tables.accounts.get(account_id)

    def add_account(self, registration: Registration, password_hash: str, now: datetime) -> Account:
        if self.find_account(registration.email_normalized) is not None:
            raise email_taken()
        account = Account(
            id=uuid4().hex,
            first_name=registration.first_name,
            last_name=registration.last_name,
            email=registration.email,
            email_normalized=registration.email_normalized,
            password_hash=password_hash,
            is_operator=False,
            created_at=now,
        )
        self.tables.accounts[account.id] = account
        return account

    def set_password_hash(self, account_id: str, password_hash: str) -> None:
        self.tables.accounts[account_id] = replace(self.tables.accounts[account_id], password_hash=password_hash)

    def add_session(self, token_hash: str, account_id: str, now: datetime, expires_at: datetime) -> None:
        self.tables.sessions[token_hash] = StoredSession(account_id, expires_at)

    def session_account(self, token_hash: str, now: datetime) -> Account | None:
        stored = self.tables.sessions.get(token_hash)
        if stored is None or stored.revoked_at is not None or stored.expires_at <= now:
            return None
        return self.tables.accounts[stored.account_id]

    def revoke_session(self, token_hash: str, now: datetime) -> None:
        stored = self.tables.sessions.get(token_hash)
        if stored is not None and stored.revoked_at is None:
            stored.revoked_at = now

    def lock_login_keys(self, email_normalized: str, client: str) -> None:
        """Nothing to lock: one transaction at a time."""

    def failures_of_pair(self, email_normalized: str, client: str, since: datetime) -> list[datetime]:
        return [
            at for email, by, at in self.tables.failures if (email, by) == (email_normalized, client) and at > since
        ]

    def failures_of_client(self, client: str, since: datetime) -> list[datetime]:
        return [at for _, by, at in self.tables.failures if by == client and at > since]

    def record_failure(self, email_normalized: str, client: str, at: datetime) -> None:
        self.tables.failures.append((email_normalized, client, at))

    def clear_failures(self, email_normalized: str, client: str) -> None:
        self.tables.failures = [f for f in self.tables.failures if f[:2] != (email_normalized, client)]

    def lock_registration_keys(self, client: str) -> None:
        """Nothing to lock: one transaction at a time."""

    def registrations_since(
        self, since: datetime, client: str | None = None, network: str | None = None
    ) -> list[datetime]:
        return [
            at
            for by, within, at in self.tables.registrations
            if at > since and client in (None, by) and network in (None, within)
        ]

    def record_registration(self, client: str, network: str, at: datetime) -> None:
        self.tables.registrations.append((client, network, at))

    def remember_client(self, client: str, at: datetime) -> None:
        self.tables.known_clients[client] = max(at, self.tables.known_clients.get(client, at))

    def known_since(self, client: str, since: datetime) -> datetime | None:
        last = self.tables.known_clients.get(client)
        return last if last is not None and last > since else None

    def purge_stale(self, now: datetime, before: Forgotten) -> None:
        self.tables.sessions = {
            key: s for key, s in self.tables.sessions.items() if s.expires_at > now and s.revoked_at is None
        }
        self.tables.failures = [f for f in self.tables.failures if f[2] > before.failures]
        self.tables.registrations = [r for r in self.tables.registrations if r[2] > before.registrations]
        self.tables.known_clients = {c: at for c, at in self.tables.known_clients.items() if at > before.known_clients}


def memory_units() -> MemoryUnits:
    return MemoryUnits("accounts", AccountTables(), MemoryAccounts)


class Clock:
    """The time the use cases read; a test moves it on."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)
