"""Registration and login throttles, the session cookie and what the internal port serves, through HTTP,
on a stack of its own with the production settings (the Secure __Host- cookie included), behind a trusted
proxy (127.0.0.1): each test is its own client by X-Forwarded-For."""

import time
import uuid
from pathlib import Path

import httpx
import pytest

from infra.local.isolation import running_stack
from infra.local.stack import free_port
from kernodeck_accounts.config import AccountsSettings
from tests.e2e.conftest import assert_problem, post_when_let_in

PASSWORD = "correct horse battery staple"
PRODUCTION = {
    f"ACCOUNTS_{name.upper()}": str(AccountsSettings.model_fields[name].default)
    for name in ("registration_client_limit", "registration_network_limit", "registration_overall_limit")
}


@pytest.fixture(scope="module")
def access_stack(tmp_path_factory):
    env = {
        **PRODUCTION,
        "GATEWAY_TRUSTED_PROXIES": "127.0.0.1/32",
        # A first backoff step longer than a 64 MiB hash takes on a loaded machine, so that the step is
        # still running when the next attempt comes.
        "ACCOUNTS_LOGIN_BACKOFF_BASE_S": "5",
        "GATEWAY_COOKIE_SECURE": "true",
        "GATEWAY_METRICS": "internal",
        "GATEWAY_API_DOCS": "internal",
        "GATEWAY_INTERNAL_PORT": str(free_port()),
    }
    with running_stack(
        Path(tmp_path_factory.mktemp("access-stack")), "kd_access", env, production_hashing=True
    ) as stack:
        yield stack


@pytest.fixture(scope="module")
def access(access_stack):
    with httpx.Client(base_url=access_stack.url, timeout=10) as http:
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


def test_twenty_registrations_from_one_client_then_429_and_others_of_its_network_still_register(access):
    for _ in range(20):
        assert register(access, "198.51.100.10").status_code == 201
    refused = assert_problem(register(access, "198.51.100.10"), 429, "too_many_requests")
    assert "Nguyen" not in str(refused)
    assert 3500 < int(register(access, "198.51.100.10").headers["retry-after"]) <= 3600
    assert register(access, "198.51.100.11").status_code == 201  # behind the same /24: 60 an hour


def test_an_ipv6_client_registers_as_its_64(access):
    for n in range(20):
        assert register(access, f"2001:db8:10:1::{n + 1}").status_code == 201
    assert register(access, "2001:db8:10:1:abcd::1").status_code == 429
    assert register(access, "2001:db8:10:2::1").status_code == 201


def test_a_taken_email_is_409_before_the_quota_and_asking_about_many_backs_off(access):
    email = register(access, "198.51.100.50").json()["email"]
    body = {"first_name": "Lan", "last_name": "Nguyen", "email": email, "password": PASSWORD}
    for _ in range(20):  # the asking client's free failures
        assert_problem(access.post("/api/v1/accounts", json=body, headers=via("198.51.100.51")), 409, "email_taken")
    assert_problem(access.post("/api/v1/accounts", json=body, headers=via("198.51.100.51")), 429, "too_many_requests")
    assert register(access, "198.51.100.52").status_code == 201  # its network's quota was never touched


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


def cookie_attributes(response: httpx.Response, name: str) -> dict[str, str]:
    for header in response.headers.get_list("set-cookie"):
        if header.startswith(f"{name}="):
            value, *attributes = (part.strip() for part in header.split(";"))
            return {"value": value.split("=", 1)[1]} | {
                a.split("=")[0].lower(): a.partition("=")[2] for a in attributes
            }
    raise AssertionError(f"no {name} cookie in {response.headers.get_list('set-cookie')}")


def test_the_session_cookie_is_secure_host_only_and_its_csrf_token_is_bound_to_it(access):
    email = register(access, "198.51.100.40").json()["email"]
    first, second = (log_in(access, email, "198.51.100.40") for _ in range(2))
    session = cookie_attributes(first, "__Host-kd_session")
    assert {"secure", "httponly", "path"} <= set(session) and session["path"] == "/" and "domain" not in session
    csrf = cookie_attributes(first, "kd_csrf")
    assert "secure" in csrf and "httponly" not in csrf
    assert not [h for h in first.headers.get_list("set-cookie") if h.startswith("kd_session=")]

    # What a browser on HTTPS sends back (httpx keeps Secure cookies to HTTPS, so they are sent by hand here).
    as_browser = {"Cookie": f"__Host-kd_session={session['value']}"}
    assert access.get("/api/v1/me", headers=as_browser).json()["email"] == email
    assert access.get("/api/v1/me", headers={"Cookie": f"kd_session={session['value']}"}).status_code == 401

    order = {"model": "l40s", "duration_days": 3, "lots": 1, "preparation": "notebook"}
    forged = access.post("/api/v1/orders", json=order, headers=as_browser)
    assert_problem(forged, 403, "csrf_failed")
    other_sessions_token = cookie_attributes(second, "kd_csrf")["value"]
    assert other_sessions_token != csrf["value"]
    swapped = access.post("/api/v1/orders", json=order, headers={**as_browser, "X-CSRF-Token": other_sessions_token})
    assert_problem(swapped, 403, "csrf_failed")
    made = access.post("/api/v1/orders", json=order, headers={**as_browser, "X-CSRF-Token": csrf["value"]})
    assert made.status_code == 201, made.text

    out = access.delete("/api/v1/sessions/current", headers={**as_browser, "X-CSRF-Token": csrf["value"]})
    assert out.status_code == 204
    cleared = cookie_attributes(out, "__Host-kd_session")
    assert "secure" in cleared and cleared["max-age"] == "0"


def test_metrics_and_docs_are_on_the_internal_port_only(access_stack, access):
    for path in ("/metrics", "/api/v1/openapi.json", "/api/v1/docs"):
        assert_problem(access.get(path), 404, "not_found")
    internal = f"http://127.0.0.1:{access_stack.env['GATEWAY_INTERNAL_PORT']}"
    access.get("/api/v1/catalog")
    metrics = httpx.get(f"{internal}/metrics").text
    assert 'kernodeck_http_requests_total{method="GET",route="/api/v1/catalog",status="200"}' in metrics
    assert "/api/v1/accounts" in httpx.get(f"{internal}/api/v1/openapi.json").json()["paths"]
    assert "swagger" in httpx.get(f"{internal}/api/v1/docs").text.lower()
