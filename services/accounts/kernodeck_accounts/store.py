"""Accounts tables and the queries the service needs."""

from datetime import datetime
from uuid import uuid4

from sqlalchemy import Index, delete, func, or_, update
from sqlmodel import Column, Field, Session, SQLModel, select

from kernodeck_accounts.domain import Registration
from kernodeck_kit.db import is_postgres
from kernodeck_kit.types import UtcDateTime, utcnow


class AccountRow(SQLModel, table=True):
    __tablename__ = "accounts"

    id: str = Field(default_factory=lambda: uuid4().hex, primary_key=True, max_length=32)
    first_name: str = Field(max_length=100)
    last_name: str = Field(max_length=100)
    email: str = Field(max_length=254)
    email_normalized: str = Field(max_length=254, unique=True)
    password_hash: str
    is_operator: bool = False
    created_at: datetime = Field(default_factory=utcnow, sa_column=Column(UtcDateTime(), nullable=False))


class SessionRow(SQLModel, table=True):
    """A login. Only the token's SHA-256 is kept: a copy of this table opens no session."""

    __tablename__ = "sessions"

    token_hash: str = Field(primary_key=True, max_length=64)
    account_id: str = Field(foreign_key="accounts.id", max_length=32)
    created_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    expires_at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))
    revoked_at: datetime | None = Field(default=None, sa_column=Column(UtcDateTime()))


class LoginFailureRow(SQLModel, table=True):
    __tablename__ = "login_failures"
    __table_args__ = (
        Index("ix_login_failures_email_at", "email_normalized", "at"),
        Index("ix_login_failures_address_at", "client_address", "at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    email_normalized: str
    client_address: str
    at: datetime = Field(sa_column=Column(UtcDateTime(), nullable=False))


def find_account(session: Session, email_normalized: str) -> AccountRow | None:
    return session.exec(select(AccountRow).where(AccountRow.email_normalized == email_normalized)).first()


def add_account(session: Session, registration: Registration, password_hash: str) -> AccountRow:
    """Insert and flush, so a concurrent duplicate email fails here with IntegrityError."""
    row = AccountRow(
        first_name=registration.first_name,
        last_name=registration.last_name,
        email=registration.email,
        email_normalized=registration.email_normalized,
        password_hash=password_hash,
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


def session_account(session: Session, token_hash: str, now: datetime) -> AccountRow | None:
    """The account of a session that is neither expired nor revoked."""
    return session.exec(
        select(AccountRow)
        .join(SessionRow, SessionRow.account_id == AccountRow.id)
        .where(SessionRow.token_hash == token_hash, SessionRow.revoked_at.is_(None), SessionRow.expires_at > now)
    ).first()


def revoke_session(session: Session, token_hash: str, now: datetime) -> None:
    session.execute(
        update(SessionRow)
        .where(SessionRow.token_hash == token_hash, SessionRow.revoked_at.is_(None))
        .values(revoked_at=now)
    )


def lock_login_keys(session: Session, email_normalized: str, client_address: str) -> None:
    """Hold logins for this email and for this address back until the transaction ends.

    Always the email first, then the address, so two logins never wait on each other in a
    cycle. SQLite needs nothing: its transactions begin IMMEDIATE, one writer at a time.
    """
    if is_postgres(session.get_bind()):
        for namespace, key in ((1, email_normalized), (2, client_address)):
            session.execute(select(func.pg_advisory_xact_lock(namespace, func.hashtext(key))))


def failures_by_email(session: Session, email_normalized: str, since: datetime) -> list[datetime]:
    return _failure_times(session, LoginFailureRow.email_normalized == email_normalized, since)


def failures_by_address(session: Session, client_address: str, since: datetime) -> list[datetime]:
    return _failure_times(session, LoginFailureRow.client_address == client_address, since)


def _failure_times(session: Session, key, since: datetime) -> list[datetime]:
    return list(session.exec(select(LoginFailureRow.at).where(key, LoginFailureRow.at > since)).all())


def record_failure(session: Session, email_normalized: str, client_address: str, at: datetime) -> None:
    session.add(LoginFailureRow(email_normalized=email_normalized, client_address=client_address, at=at))


def clear_failures(session: Session, email_normalized: str) -> None:
    session.execute(delete(LoginFailureRow).where(LoginFailureRow.email_normalized == email_normalized))


def purge_stale(session: Session, now: datetime, failures_before: datetime) -> None:
    """Drop sessions that can no longer open anything and failures no throttle still counts."""
    session.execute(delete(SessionRow).where(or_(SessionRow.expires_at <= now, SessionRow.revoked_at.is_not(None))))
    session.execute(delete(LoginFailureRow).where(LoginFailureRow.at <= failures_before))
