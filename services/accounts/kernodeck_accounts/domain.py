"""Account rules: what a registration must satisfy, sessions, login throttling. No I/O."""

import hashlib
import ipaddress
import math
import re
import secrets
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import IntEnum

from kernodeck_contracts.errors import ErrorCode, ServiceError

NAME_MAX = 100
EMAIL_MAX = 254
PASSWORD_MIN = 15
PASSWORD_MAX = 128

# One @, no whitespace or control characters, a dotted domain whose last label
# has two characters or more. Deliverability is the customer's business.
_EMAIL = re.compile(r"^[^@\s\x00-\x1f\x7f]{1,64}@(?:[^@\s\x00-\x1f\x7f.]+\.)+[^@\s\x00-\x1f\x7f.]{2,}$")


@dataclass(frozen=True)
class Account:
    id: str
    first_name: str
    last_name: str
    email: str
    email_normalized: str
    password_hash: str = field(repr=False)
    is_operator: bool
    created_at: datetime


def email_taken() -> ServiceError:
    return ServiceError(ErrorCode.EMAIL_TAKEN, "an account with this email already exists")


def invalid_credentials() -> ServiceError:
    return ServiceError(ErrorCode.INVALID_CREDENTIALS, "email or password is incorrect")


def unauthenticated() -> ServiceError:
    return ServiceError(ErrorCode.UNAUTHENTICATED, "not logged in or session expired")


@dataclass(frozen=True)
class Registration:
    first_name: str
    last_name: str
    email: str
    email_normalized: str
    password: str = field(repr=False)


def nfc(value):
    """`value` in Unicode NFC when it is a string: an accented letter typed precomposed on one
    device and decomposed (NFD) on another is then one character, the same in every comparison."""
    return unicodedata.normalize("NFC", value) if isinstance(value, str) else value


def normalize_email(email: str) -> str:
    """The form that makes two spellings of one address the same account."""
    return nfc(email.strip().lower())


def validate_registration(first_name, last_name, email, password) -> Registration:
    """Check every field, in NFC; all broken rules are reported together."""
    first_name, last_name, email, password = (nfc(value) for value in (first_name, last_name, email, password))
    problems = {
        "first_name": _name_problem(first_name),
        "last_name": _name_problem(last_name),
        "email": _email_problem(email),
        "password": _password_problem(password),
    }
    errors = [{"field": name, "message": message} for name, message in problems.items() if message]
    if errors:
        raise ServiceError(ErrorCode.VALIDATION_ERROR, "the registration is not valid", errors)
    return Registration(
        first_name=first_name.strip(),
        last_name=last_name.strip(),
        email=email.strip(),
        email_normalized=normalize_email(email),
        password=password,
    )


def has_lone_surrogate(value: str) -> bool:
    """A UTF-16 half on its own (JSON's "\\ud800"): no UTF-8 spells it, so nothing could store or hash it."""
    return any("\ud800" <= character <= "\udfff" for character in value)


def _has_control_character(value: str) -> bool:
    return any(unicodedata.category(character) == "Cc" for character in value)


def _name_problem(value) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must not be empty"
    if len(value.strip()) > NAME_MAX:
        return f"must be at most {NAME_MAX} characters"
    if has_lone_surrogate(value) or _has_control_character(value):
        return "must not contain control characters or lone surrogates"
    return None


def _email_problem(value) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "must not be empty"
    if len(value.strip()) > EMAIL_MAX:
        return f"must be at most {EMAIL_MAX} characters"
    if has_lone_surrogate(value) or _has_control_character(value):
        return "must not contain control characters or lone surrogates"
    if not _EMAIL.match(value.strip()):
        return "is not a valid email address"
    return None


def _password_problem(value) -> str | None:
    # Characters, not bytes, and never stripped: spaces are part of a passphrase.
    if not isinstance(value, str) or not PASSWORD_MIN <= len(value) <= PASSWORD_MAX:
        return f"must be {PASSWORD_MIN} to {PASSWORD_MAX} characters"
    if has_lone_surrogate(value):
        return "must not contain lone surrogates"
    return None


def new_session_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What the database keeps instead of the token."""
    return hashlib.sha256(token.encode()).hexdigest()


def network_key(address: str) -> str:
    """The network a client address belongs to, as the registration throttle counts it: an IPv4 address by
    its /24 (one office, one NAT pool, one renter's block), an IPv6 one by its /48 (one site)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ipaddress.ip_network(f"{ip}/{24 if ip.version == 4 else 48}", strict=False))


def client_key(address: str) -> str:
    """What the throttles count a client address as: an IPv6 address by its /64 (one subscriber's
    network hands out as many addresses as it likes), an IPv4 one (mapped into IPv6 or not) as itself."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if ip.version == 4:
        return str(ip)
    if ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ipaddress.ip_network(f"{ip}/64", strict=False))


@dataclass(frozen=True)
class ThrottleRule:
    """At most `limit` events per key within a sliding `window`."""

    limit: int
    window: timedelta

    def retry_after(self, events: Iterable[datetime], now: datetime) -> int:
        """Whole seconds until the next one is allowed; 0 when not blocked."""
        recent = sorted(at for at in events if at > now - self.window)
        if len(recent) < self.limit:
            return 0
        # Allowed again once enough events leave the window to fall below the limit.
        allowed_at = recent[-self.limit] + self.window
        return math.ceil((allowed_at - now).total_seconds())


@dataclass(frozen=True)
class Backoff:
    """`free` failures within `window` cost nothing; from then on each attempt waits after the last
    failure, `base` doubled for every failure beyond the free ones, at most `cap`. Nobody is locked
    out: the wait stays short for a few mistakes and grows only for a long run of guesses."""

    free: int
    window: timedelta
    base: timedelta
    cap: timedelta

    def retry_after(self, failures: Iterable[datetime], now: datetime) -> int:
        recent = sorted(at for at in failures if at > now - self.window)
        if len(recent) < self.free:
            return 0
        doublings = min(len(recent) - self.free, 32)
        delay = min(self.base * 2**doublings, self.cap)
        return max(0, math.ceil((recent[-1] + delay - now).total_seconds()))


@dataclass(frozen=True)
class LoginThrottle:
    """Failed logins back off per (email, client) and per client: guesses from elsewhere never make
    the owner wait, and one client guessing across many emails is slowed as a whole."""

    per_pair: Backoff
    per_client: Backoff

    @property
    def window(self) -> timedelta:
        return max(self.per_pair.window, self.per_client.window)

    def retry_after(self, pair_failures: Iterable[datetime], client_failures: Iterable[datetime], now: datetime) -> int:
        """Both apply: the wait is the longer of the two."""
        return max(self.per_pair.retry_after(pair_failures, now), self.per_client.retry_after(client_failures, now))


@dataclass(frozen=True)
class RegistrationThrottle:
    """Registrations (each costs an argon2id hash and makes an account) per client, per network and for
    everyone together."""

    per_client: ThrottleRule
    per_network: ThrottleRule
    overall: ThrottleRule

    @property
    def window(self) -> timedelta:
        return max(self.per_client.window, self.per_network.window, self.overall.window)

    def retry_after(
        self,
        client_registrations: Iterable[datetime],
        network_registrations: Iterable[datetime],
        all_registrations: Iterable[datetime],
        now: datetime,
    ) -> int:
        return max(
            self.per_client.retry_after(client_registrations, now),
            self.per_network.retry_after(network_registrations, now),
            self.overall.retry_after(all_registrations, now),
        )


@dataclass(frozen=True)
class Forgotten:
    """What the hourly purge drops: what happened at or before these moments."""

    failures: datetime
    registrations: datetime
    known_clients: datetime


class Standing(IntEnum):
    """A client's place in the password queue: lower goes first."""

    KNOWN = 0  # its password checked out lately (a login or a registration), with no failed login since
    OTHER = 1


def standing(known_since: datetime | None, client_failures: Iterable[datetime]) -> Standing:
    """`known_since`: the client's last success within the time it stays known (None: none)."""
    if known_since is None or any(at > known_since for at in client_failures):
        return Standing.OTHER
    return Standing.KNOWN
