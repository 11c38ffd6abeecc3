"""The accounts' use cases, on a unit of work (the database's in the service, plain objects in tests):
register, log in (throttled, then in turn for the password hash: admission.py), resolve and end sessions,
purge what no rule needs any more."""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from kernodeck_accounts.admission import Kind
from kernodeck_accounts.config import AccountsPolicy
from kernodeck_accounts.domain import (
    Account,
    Forgotten,
    LoginThrottle,
    Registration,
    RegistrationThrottle,
    Standing,
    client_key,
    email_taken,
    has_lone_surrogate,
    invalid_credentials,
    network_key,
    new_session_token,
    nfc,
    normalize_email,
    standing,
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
    def lock_login_keys(self, email_normalized: str, client: str) -> None: ...
    def failures_of_pair(self, email_normalized: str, client: str, since: datetime) -> list[datetime]: ...
    def failures_of_client(self, client: str, since: datetime) -> list[datetime]: ...
    def record_failure(self, email_normalized: str, client: str, at: datetime) -> None: ...
    def clear_failures(self, email_normalized: str, client: str) -> None: ...
    def lock_registration_keys(self, client: str) -> None: ...
    def registrations_since(
        self, since: datetime, client: str | None = None, network: str | None = None
    ) -> list[datetime]: ...
    def record_registration(self, client: str, network: str, at: datetime) -> None: ...
    def remember_client(self, client: str, at: datetime) -> None: ...
    def known_since(self, client: str, since: datetime) -> datetime | None: ...
    def purge_stale(self, now: datetime, before: Forgotten) -> None: ...


@dataclass(frozen=True)
class Rules:
    passwords: Passwords
    session_ttl: timedelta
    throttle: LoginThrottle
    registrations: RegistrationThrottle
    known_client_for: timedelta


def rules_for(policy: AccountsPolicy) -> Rules:
    return Rules(
        passwords=Passwords(
            policy.argon2_time_cost,
            policy.argon2_memory_cost_kib,
            policy.argon2_parallelism,
            threads=policy.password_hashing_threads,
            budgets=policy.password_budgets,
            niceness=policy.password_hashing_niceness,
        ),
        session_ttl=policy.session_ttl,
        throttle=policy.login_throttle,
        registrations=policy.registration_throttle,
        known_client_for=policy.known_client_for,
    )


@dataclass(frozen=True)
class Session:
    token: str
    expires_at: datetime
    account: Account


def too_many(what: str, wait: int) -> ServiceError:
    return ServiceError(ErrorCode.TOO_MANY_REQUESTS, f"too many {what}, try again later", retry_after=wait)


def register(units: Units[AccountsUnit], rules: Rules, clock: Clock, first_name, last_name, email, password, address):
    registration = validate_registration(first_name, last_name, email, password)
    client, network = client_key(str(address)), network_key(str(address))
    _refuse_a_taken_email(units, rules, clock, registration.email_normalized, client)
    # Each registration costs a hash: it waits its turn, then counts against the client's, its network's and
    # everyone's registrations, in one locked transaction so parallel ones see each other. One the queue
    # refuses (503) counts nothing: the client comes back when told.
    with rules.passwords.turn(Kind.REGISTRATION, client):
        with units.transaction() as unit:
            unit.lock_registration_keys(client)
            now = clock()
            throttle = rules.registrations
            wait = throttle.retry_after(
                unit.registrations_since(now - throttle.per_client.window, client=client),
                unit.registrations_since(now - throttle.per_network.window, network=network),
                unit.registrations_since(now - throttle.overall.window),
                now,
            )
            if not wait:
                unit.record_registration(client, network, now)
        if wait:
            log.warning("registration throttled", extra={"client_address": client, "retry_after": wait})
            raise too_many("registrations", wait)
        password_hash = rules.passwords.hash(registration.password)
    with units.transaction() as unit:
        # The unique index settles a registration of the same email that got in meanwhile (email_taken).
        account = unit.add_account(registration, password_hash, clock())
        unit.remember_client(client, account.created_at)
    log.info("account registered", extra={"account_id": account.id})
    return account


def _refuse_a_taken_email(units: Units[AccountsUnit], rules: Rules, clock: Clock, email_key: str, client: str):
    """The answer to a registration of an email that has an account, before any quota is spent: email_taken.
    It tells whether an account exists, so it counts as a failed login of this client for that email:
    asking about many emails backs off as guessing does."""
    with units.transaction() as unit:
        if unit.find_account(email_key) is None:
            return
        unit.lock_login_keys(email_key, client)
        now = clock()
        wait = rules.throttle.per_client.retry_after(
            unit.failures_of_client(client, now - rules.throttle.per_client.window), now
        )
        if not wait:
            unit.record_failure(email_key, client, now)
    if wait:
        raise too_many("failed logins", wait)
    raise email_taken()


def login(units: Units[AccountsUnit], rules: Rules, clock: Clock, email, password, address) -> Session:
    if not isinstance(email, str) or not isinstance(password, str) or has_lone_surrogate(email + password):
        raise invalid_credentials()
    email_key, password, client = normalize_email(email), nfc(password), client_key(str(address))
    throttle, passwords = rules.throttle, rules.passwords
    with units.transaction() as unit:
        place = _standing(unit, rules, client, clock())
    # A login the queue refuses (503) reads nothing more and counts as no failure: it comes back when told.
    with passwords.turn(Kind.LOGIN, client, place):
        # The attempt is recorded as a failure before its password is checked, in the same locked
        # transaction as the count: parallel guesses each see the ones before them, so exactly the free
        # ones get checked. Success clears this email's failures from this client, this one's too.
        with units.transaction() as unit:
            unit.lock_login_keys(email_key, client)
            now = clock()
            wait = throttle.retry_after(
                unit.failures_of_pair(email_key, client, now - throttle.per_pair.window),
                unit.failures_of_client(client, now - throttle.per_client.window),
                now,
            )
            if not wait:
                unit.record_failure(email_key, client, now)
                account = unit.find_account(email_key)
        if wait:
            log.warning("login throttled", extra={"client_address": client, "retry_after": wait})
            raise too_many("failed logins", wait)
        checked = passwords.verify(account.password_hash if account else None, password)
        new_hash = passwords.hash(password) if checked and passwords.needs_rehash(account.password_hash) else None
    if not checked:
        raise invalid_credentials()

    token = new_session_token()
    expires_at = now + rules.session_ttl
    with units.transaction() as unit:
        unit.clear_failures(email_key, client)
        if new_hash is not None:
            unit.set_password_hash(account.id, new_hash)
        unit.add_session(token_hash(token), account.id, now, expires_at)
        unit.remember_client(client, now)
    log.info("logged in", extra={"account_id": account.id})
    return Session(token, expires_at, account)


def _standing(unit: AccountsUnit, rules: Rules, client: str, now: datetime) -> Standing:
    """Where a login from `client` goes in the password queue: read without a lock, before it queues."""
    known_since = unit.known_since(client, now - rules.known_client_for)
    if known_since is None:
        return Standing.OTHER
    return standing(known_since, unit.failures_of_client(client, known_since))


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


def purge_stale(units: Units[AccountsUnit], rules: Rules, now: datetime) -> None:
    before = Forgotten(
        failures=now - rules.throttle.window,
        registrations=now - rules.registrations.window,
        known_clients=now - rules.known_client_for,
    )
    with units.transaction() as unit:
        unit.purge_stale(now, before)
