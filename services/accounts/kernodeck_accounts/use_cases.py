"""The accounts' use cases, on a unit of work (the database's in the service, plain objects in tests):
register, log in (throttled), resolve and end sessions, purge what no rule needs any more."""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from kernodeck_accounts.config import AccountsPolicy
from kernodeck_accounts.domain import (
    Account,
    LoginThrottle,
    Registration,
    email_taken,
    invalid_credentials,
    new_session_token,
    nfc,
    normalize_email,
    token_hash,
    unauthenticated,
    validate_registration,
)
from kernodeck_accounts.passwords import Passwords
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.units import Units

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]


class AccountsUnit(Protocol):
    def find_account(self, email_normalized: str) -> Account | None: ...
    def get_account(self, account_id: str) -> Account | None: ...
    def add_account(self, registration: Registration, password_hash: str, now: datetime) -> Account: ...
    def set_password_hash(self, account_id: str, password_hash: str) -> None: ...
    def add_session(self, token_hash: str, account_id: str, now: datetime, expires_at: datetime) -> None: ...
    def session_account(self, token_hash: str, now: datetime) -> Account | None: ...
    def revoke_session(self, token_hash: str, now: datetime) -> None: ...
    def lock_login_keys(self, email_normalized: str, client_address: str) -> None: ...
    def failures_by_email(self, email_normalized: str, since: datetime) -> list[datetime]: ...
    def failures_by_address(self, client_address: str, since: datetime) -> list[datetime]: ...
    def record_failure(self, email_normalized: str, client_address: str, at: datetime) -> None: ...
    def clear_failures(self, email_normalized: str) -> None: ...
    def purge_stale(self, now: datetime, failures_before: datetime) -> None: ...


@dataclass(frozen=True)
class Rules:
    passwords: Passwords
    session_ttl: timedelta
    throttle: LoginThrottle


def rules_for(policy: AccountsPolicy) -> Rules:
    return Rules(
        passwords=Passwords(policy.argon2_time_cost, policy.argon2_memory_cost_kib, policy.argon2_parallelism),
        session_ttl=policy.session_ttl,
        throttle=policy.login_throttle,
    )


@dataclass(frozen=True)
class Session:
    token: str
    expires_at: datetime
    account: Account


def register(units: Units[AccountsUnit], passwords: Passwords, clock: Clock, first_name, last_name, email, password):
    registration = validate_registration(first_name, last_name, email, password)
    # Checked before hashing to spare the work; the unique index settles a race.
    with units.transaction() as unit:
        if unit.find_account(registration.email_normalized) is not None:
            raise email_taken()
    password_hash = passwords.hash(registration.password)
    with units.transaction() as unit:
        account = unit.add_account(registration, password_hash, clock())
    log.info("account registered", extra={"account_id": account.id})
    return account


def login(units: Units[AccountsUnit], rules: Rules, clock: Clock, email, password, client_address) -> Session:
    if not isinstance(email, str) or not isinstance(password, str):
        raise invalid_credentials()
    email_key, password = normalize_email(email), nfc(password)
    throttle = rules.throttle
    # The attempt is recorded as a failure before its password is checked, in the same locked
    # transaction as the count: parallel guesses each see the ones before them, so exactly
    # `limit` get checked. Success clears the email's failures, this attempt's included.
    with units.transaction() as unit:
        unit.lock_login_keys(email_key, client_address)
        now = clock()
        wait = throttle.retry_after(
            unit.failures_by_email(email_key, now - throttle.per_email.window),
            unit.failures_by_address(client_address, now - throttle.per_address.window),
            now,
        )
        if not wait:
            unit.record_failure(email_key, client_address, now)
        account = unit.find_account(email_key)
    if wait:
        log.warning("login throttled", extra={"client_address": client_address, "retry_after": wait})
        raise ServiceError(ErrorCode.TOO_MANY_REQUESTS, "too many failed logins, try again later", retry_after=wait)

    passwords = rules.passwords
    if not passwords.verify(account.password_hash if account else None, password):
        raise invalid_credentials()

    new_hash = passwords.hash(password) if passwords.needs_rehash(account.password_hash) else None
    token = new_session_token()
    expires_at = now + rules.session_ttl
    with units.transaction() as unit:
        unit.clear_failures(email_key)
        if new_hash is not None:
            unit.set_password_hash(account.id, new_hash)
        unit.add_session(token_hash(token), account.id, now, expires_at)
    log.info("logged in", extra={"account_id": account.id})
    return Session(token, expires_at, account)


def resolve_session(units: Units[AccountsUnit], clock: Clock, token) -> Account:
    if not isinstance(token, str):
        raise unauthenticated()
    with units.transaction() as unit:
        account = unit.session_account(token_hash(token), clock())
    if account is None:
        raise unauthenticated()
    return account


def logout(units: Units[AccountsUnit], clock: Clock, token) -> None:
    if isinstance(token, str):
        with units.transaction() as unit:
            unit.revoke_session(token_hash(token), clock())


def get_account(units: Units[AccountsUnit], account_id) -> Account:
    with units.transaction() as unit:
        account = unit.get_account(account_id) if isinstance(account_id, str) else None
    if account is None:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such account")
    return account


def purge_stale(units: Units[AccountsUnit], throttle: LoginThrottle, now: datetime) -> None:
    longest_window = max(throttle.per_email.window, throttle.per_address.window)
    with units.transaction() as unit:
        unit.purge_stale(now, now - longest_window)
