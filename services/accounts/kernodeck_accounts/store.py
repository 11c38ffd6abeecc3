"""Accounts tables and the queries the service needs."""

from datetime import datetime
from uuid import uuid4

from sqlalchemy import Index, bindparam, delete, func, or_, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlmodel import Column, Field, Session, SQLModel, select

from kernodeck_accounts.domain import Account, Forgotten, Registration, email_taken
from kernodeck_kit.db import is_postgres
from kernodeck_kit.types import UtcDateTime
from kernodeck_kit.units import SqlUnit


class AccountRow(SQLModel, table=True):
    __tablename__ = "accounts"

    id: str = Field(default_factory=lambda: uuid4().hex, primary_key=True, max_length=32)
    first_name: str = Field(max_length=100)
    last_name: str = Field(max_length=100)
    email: str = Field(max_length=254)
    email_normalized: str = Field(max_length=254, unique=True)
    password_hash: str
    is_operator: bool = False
    created_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class SessionRow(SQLModel, table=True):
    """A login. Only the token's SHA-256 is kept: a copy of this table opens no session."""

    __tablename__ = "sessions"

    token_hash: str = Field(primary_key=True, max_length=64)
    account_id: str = Field(foreign_key="accounts.id", max_length=32)
    created_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    expires_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    revoked_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))


class LoginFailureRow(SQLModel, table=True):
    """A failed login, or one being checked. `client_address` is the client as the throttles count it
    (an IPv6 /64)."""

    __tablename__ = "login_failures"
    __table_args__ = (
        Index("ix_login_failures_email_at", "email_normalized", "at"),
        Index("ix_login_failures_address_at", "client_address", "at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    email_normalized: str
    client_address: str
    at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


class RegistrationRow(SQLModel, table=True):
    """A registration let through to hashing, counted by the registration throttle, then purged.
    `client_network`: the client's /24 (IPv4) or /48 (IPv6)."""

    __tablename__ = "registrations"
    __table_args__ = (
        Index("ix_registrations_address_at", "client_address", "at"),
        Index("ix_registrations_network_at", "client_network", "at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    client_address: str
    client_network: str = Field(sa_column_kwargs={"server_default": ""})
    at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False, index=True))


class KnownClientRow(SQLModel, table=True):
    """A client whose login or registration last succeeded at `last_success_at`: its logins go first in the
    password queue while it has no failure since (domain.standing)."""

    __tablename__ = "known_clients"

    client_address: str = Field(primary_key=True)
    last_success_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False, index=True))


def find_account(session: Session, email_normalized: str) -> AccountRow | None:
    return session.exec(select(AccountRow).where(AccountRow.email_normalized == email_normalized)).first()


def add_account(session: Session, registration: Registration, password_hash: str, now: datetime) -> AccountRow:
    """Insert and flush, so a concurrent duplicate email fails here with IntegrityError."""
    row = AccountRow(
        first_name=registration.first_name,
        last_name=registration.last_name,
        email=registration.email,
        email_normalized=registration.email_normalized,
        password_hash=password_hash,
        created_at=now,
    )
    session.add(row)
    session.flush()
    return row


def set_password_hash(session: Session, account_id: str, password_hash: str) -> None:
    session.execute(update(AccountRow).where(AccountRow.id == account_id).values(password_hash=password_hash))


def set_operator(session: Session, email_normalized: str, is_operator: bool) -> AccountRow | None:
    row = find_account(session, email_normalized)
    if row is not None:
        row.is_operator = is_operator
        session.add(row)
    return row


def add_session(session: Session, token_hash: str, account_id: str, now: datetime, expires_at: datetime) -> None:
    session.add(SessionRow(token_hash=token_hash, account_id=account_id, created_at=now, expires_at=expires_at))


# Built once: every request through the gateway resolves its session, and building the statement (its clauses,
# its cache key) costs about as much as running it.
_SESSION_ACCOUNT = (
    select(AccountRow)
    .join(SessionRow, SessionRow.account_id == AccountRow.id)
    .where(
        SessionRow.token_hash == bindparam("token_hash"),
        SessionRow.revoked_at.is_(None),
        SessionRow.expires_at > bindparam("now"),
    )
)


def session_account(session: Session, token_hash: str, now: datetime) -> AccountRow | None:
    """The account of a session that is neither expired nor revoked."""
    return session.exec(_SESSION_ACCOUNT, params={"token_hash": token_hash, "now": now}).first()


def revoke_session(session: Session, token_hash: str, now: datetime) -> None:
    session.execute(
        update(SessionRow)
        .where(SessionRow.token_hash == token_hash, SessionRow.revoked_at.is_(None))
        .values(revoked_at=now)
    )


def _advisory_locks(session: Session, *keys: tuple[int, str]) -> None:
    """Transaction-scoped PostgreSQL advisory locks, taken in the order given (callers keep one order, so
    two transactions never wait on each other in a cycle). SQLite needs nothing: its transactions begin
    IMMEDIATE, one writer at a time."""
    if is_postgres(session.get_bind()):
        for namespace, key in keys:
            session.execute(select(func.pg_advisory_xact_lock(namespace, func.hashtext(key))))


def lock_login_keys(session: Session, email_normalized: str, client: str) -> None:
    """Hold logins for this email from this client, and for this client, back until the transaction ends."""
    _advisory_locks(session, (1, f"{email_normalized} {client}"), (2, client))


def lock_registration_keys(session: Session, client: str) -> None:
    """Hold registrations from this client, then everyone's, back until the transaction ends."""
    _advisory_locks(session, (3, client), (4, "all"))


def failures_of_pair(session: Session, email_normalized: str, client: str, since: datetime) -> list[datetime]:
    return _failure_times(
        session,
        (LoginFailureRow.email_normalized == email_normalized) & (LoginFailureRow.client_address == client),
        since,
    )


def failures_of_client(session: Session, client: str, since: datetime) -> list[datetime]:
    return _failure_times(session, LoginFailureRow.client_address == client, since)


def _failure_times(session: Session, key, since: datetime) -> list[datetime]:
    return list(session.exec(select(LoginFailureRow.at).where(key, LoginFailureRow.at > since)).all())


def record_failure(session: Session, email_normalized: str, client: str, at: datetime) -> None:
    session.add(LoginFailureRow(email_normalized=email_normalized, client_address=client, at=at))


def clear_failures(session: Session, email_normalized: str, client: str) -> None:
    session.execute(
        delete(LoginFailureRow).where(
            LoginFailureRow.email_normalized == email_normalized, LoginFailureRow.client_address == client
        )
    )


def registrations_since(
    session: Session, since: datetime, client: str | None = None, network: str | None = None
) -> list[datetime]:
    query = select(RegistrationRow.at).where(RegistrationRow.at > since)
    if client is not None:
        query = query.where(RegistrationRow.client_address == client)
    if network is not None:
        query = query.where(RegistrationRow.client_network == network)
    return list(session.exec(query).all())


def record_registration(session: Session, client: str, network: str, at: datetime) -> None:
    session.add(RegistrationRow(client_address=client, client_network=network, at=at))


def remember_client(session: Session, client: str, at: datetime) -> None:
    """One row per client, its latest success kept (an upsert: two successes at once insert one row)."""
    dialect = postgresql if is_postgres(session.get_bind()) else sqlite
    insert = dialect.insert(KnownClientRow).values(client_address=client, last_success_at=at)
    session.execute(
        insert.on_conflict_do_update(
            index_elements=[KnownClientRow.client_address],
            set_={"last_success_at": insert.excluded.last_success_at},
            where=KnownClientRow.last_success_at < insert.excluded.last_success_at,
        )
    )


def known_since(session: Session, client: str, since: datetime) -> datetime | None:
    row = session.get(KnownClientRow, client)
    return row.last_success_at if row is not None and row.last_success_at > since else None


def purge_stale(session: Session, now: datetime, before: Forgotten) -> None:
    """Drop sessions that can no longer open anything, and failures, registrations and known clients no rule
    still counts."""
    session.execute(delete(SessionRow).where(or_(SessionRow.expires_at <= now, SessionRow.revoked_at.is_not(None))))
    session.execute(delete(LoginFailureRow).where(LoginFailureRow.at <= before.failures))
    session.execute(delete(RegistrationRow).where(RegistrationRow.at <= before.registrations))
    session.execute(delete(KnownClientRow).where(KnownClientRow.last_success_at <= before.known_clients))


def _account(row: AccountRow | None) -> Account | None:
    if row is None:
        return None
    return Account(
        id=row.id,
        first_name=row.first_name,
        last_name=row.last_name,
        email=row.email,
        email_normalized=row.email_normalized,
        password_hash=row.password_hash,
        is_operator=row.is_operator,
        created_at=row.created_at,
    )


class SqlAccounts(SqlUnit):
    """The accounts' unit of work on one database transaction."""

    def find_account(self, email_normalized: str) -> Account | None:
        return _account(find_account(self.session, email_normalized))

    def get_account(self, account_id: str) -> Account | None:
        return _account(self.session.get(AccountRow, account_id))

    def add_account(self, registration: Registration, password_hash: str, now: datetime) -> Account:
        """The new account; email_taken when another has the email, a concurrent registration included."""
        try:
            return _account(add_account(self.session, registration, password_hash, now))
        except IntegrityError:
            raise email_taken() from None

    def set_password_hash(self, account_id: str, password_hash: str) -> None:
        set_password_hash(self.session, account_id, password_hash)

    def add_session(self, token_hash: str, account_id: str, now: datetime, expires_at: datetime) -> None:
        add_session(self.session, token_hash, account_id, now, expires_at)

    def session_account(self, token_hash: str, now: datetime) -> Account | None:
        return _account(session_account(self.session, token_hash, now))

    def revoke_session(self, token_hash: str, now: datetime) -> None:
        revoke_session(self.session, token_hash, now)

    def lock_login_keys(self, email_normalized: str, client: str) -> None:
        lock_login_keys(self.session, email_normalized, client)

    def failures_of_pair(self, email_normalized: str, client: str, since: datetime) -> list[datetime]:
        return failures_of_pair(self.session, email_normalized, client, since)

    def failures_of_client(self, client: str, since: datetime) -> list[datetime]:
        return failures_of_client(self.session, client, since)

    def record_failure(self, email_normalized: str, client: str, at: datetime) -> None:
        record_failure(self.session, email_normalized, client, at)

    def clear_failures(self, email_normalized: str, client: str) -> None:
        clear_failures(self.session, email_normalized, client)

    def lock_registration_keys(self, client: str) -> None:
        lock_registration_keys(self.session, client)

    def registrations_since(
        self, since: datetime, client: str | None = None, network: str | None = None
    ) -> list[datetime]:
        return registrations_since(self.session, since, client, network)

    def record_registration(self, client: str, network: str, at: datetime) -> None:
        record_registration(self.session, client, network, at)

    def remember_client(self, client: str, at: datetime) -> None:
        remember_client(self.session, client, at)

    def known_since(self, client: str, since: datetime) -> datetime | None:
        return known_since(self.session, client, since)

    def purge_stale(self, now: datetime, before: Forgotten) -> None:
        purge_stale(self.session, now, before)
