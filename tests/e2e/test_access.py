"""Registration and login throttles through HTTP, on a stack of their own with the production limits,
behind a trusted proxy (127.0.0.1): each test is its own client by X-Forwarded-For."""

import time
import uuid
from pathlib import Path

import httpx
import pytest

from infra.local.isolation import running_stack
from kernodeck_accounts.config import AccountsSettings
from tests.e2e.conftest import assert_problem, post_when_let_in

PASSWORD = "correct horse battery staple"
PRODUCTION = {
    f"ACCOUNTS_{name.upper()}": str(AccountsSettings.model_fields[name].default)
    for name in ("registration_client_limit", "registration_overall_limit")
}


@pytest.fixture(scope="module")
def access(tmp_path_factory):
    # A first backoff step longer than a 64 MiB hash takes on a loaded machine, so that the step is still
    # running when the next attempt comes.
    env = {**PRODUCTION, "GATEWAY_TRUSTED_PROXIES": "127.0.0.1/32", "ACCOUNTS_LOGIN_BACKOFF_BASE_S": "5"}
    with (
        running_stack(Path(tmp_path_factory.mktemp("access-stack")), "kd_access", env) as stack,
        httpx.Client(base_url=stack.url, timeout=10) as http,
    ):
        yield http


def via(client_address: str, *hops: str) -> dict:
    """Headers of a request the trusted proxy passed on from `client_address` (what the client itself
    wrote before it, `hops`, comes first)."""
    return {"X-Forwarded-For": ", ".join((*hops, client_address))}


def register(http: httpx.Client, client_address: str) -> httpx.Response:
    body = {"first_name": "Lan", "last_name": "Nguyen", "email": f"a{uuid.uuid4().hex[:10]}@example.org"}
    return post_when_let_in(http, "/api/v1/accounts", {**body, "password": PASSWORD}, headers=via(client_address))


def log_in(http: httpx.Client, email: str, client_address: str, password: str = PASSWORD, *hops) -> httpx.Response:
    body = {"email": email, "password": password}
    return post_when_let_in(http, "/api/v1/sessions", body, headers=via(client_address, *hops))


def test_five_registrations_from_one_client_then_429_and_others_still_register(access):
    for _ in range(5):
        assert register(access, "198.51.100.10").status_code == 201
    refused = assert_problem(register(access, "198.51.100.10"), 429, "too_many_requests")
    assert "Nguyen" not in str(refused)
    assert 3500 < int(register(access, "198.51.100.10").headers["retry-after"]) <= 3600
    assert register(access, "198.51.100.11").status_code == 201


def test_an_ipv6_client_registers_as_its_64(access):
    for n in range(5):
        assert register(access, f"2001:db8:10:1::{n + 1}").status_code == 201
    assert register(access, "2001:db8:10:1:abcd::1").status_code == 429
    assert register(access, "2001:db8:10:2::1").status_code == 201


def test_guesses_make_the_guesser_wait_never_the_owner(access):
    email = register(access, "198.51.100.20").json()["email"]
    # The attacker writes another address before its own: the proxy's hop, the right-most, is what counts.
    for n in range(5):
        wrong = log_in(access, email, "203.0.113.66", "not the password!!", f"192.0.2.{n}")
        assert_problem(wrong, 401, "invalid_credentials")
    throttled = log_in(access, email, "203.0.113.66", PASSWORD, "198.51.100.20")
    assert_problem(throttled, 429, "too_many_requests")
    wait = int(throttled.headers["retry-after"])
    assert 1 <= wait <= 5

    assert log_in(access, email, "198.51.100.20").status_code == 201  # the owner, from home
    time.sleep(wait)
    assert log_in(access, email, "203.0.113.66").status_code == 201  # the backoff was seconds, not a lockout


def test_an_ipv6_guesser_is_counted_by_its_64(access):
    email = register(access, "198.51.100.30").json()["email"]
    for n in range(5):
        assert log_in(access, email, f"2001:db8:30:1::{n + 1}", "not the password!!").status_code == 401
    assert log_in(access, email, "2001:db8:30:1:ffff::1").status_code == 429
    assert log_in(access, email, "2001:db8:30:2::1").status_code == 201
