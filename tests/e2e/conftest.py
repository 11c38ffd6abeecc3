"""The running system for end-to-end tests: real processes, real broker, real PostgreSQL.

Each session gets its own RabbitMQ vhost and fresh databases, so runs never
see each other's messages or rows.
"""

import uuid
from pathlib import Path

import httpx
import pytest

from infra.local.dev_payments import dev_payments_env, keep_dev_rates_fresh
from infra.local.isolation import stack_env, temporary_databases, temporary_vhost
from infra.local.stack import Stack


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    log_dir = Path(tmp_path_factory.mktemp("stack-logs"))
    rates_file = log_dir / "rates.json"
    fresh_rates = keep_dev_rates_fresh(rates_file)
    with temporary_vhost("kd_e2e") as amqp_uri, temporary_databases(Stack.services, "kd_e2e") as databases:
        env = {**stack_env(amqp_uri, databases), **dev_payments_env(rates_file), "GATEWAY_RPC_TIMEOUT_S": "3"}
        stack = Stack(env=env, log_dir=log_dir)
        try:
            stack.start()
            yield stack
        finally:
            fresh_rates.set()
            stack.stop()
            for log in sorted(log_dir.glob("*.log")):
                if b'"level": "ERROR"' in log.read_bytes():
                    print(f"--- errors logged by {log.stem} ---\n{log.read_text()[-4000:]}")


@pytest.fixture
def client(stack):
    with httpx.Client(base_url=stack.url, timeout=10) as http:
        yield http


def new_customer(client: httpx.Client, password: str = "correct horse battery staple") -> dict:
    """Register and log in a fresh customer; returns the account and a bearer header."""
    email = f"c{uuid.uuid4().hex[:10]}@example.org"
    registered = client.post(
        "/api/v1/accounts", json={"first_name": "Lan", "last_name": "Nguyen", "email": email, "password": password}
    )
    assert registered.status_code == 201, registered.text
    session = client.post("/api/v1/sessions", json={"email": email, "password": password})
    assert session.status_code == 201, session.text
    return {
        "account": registered.json(),
        "email": email,
        "password": password,
        "headers": {"Authorization": f"Bearer {session.json()['token']}"},
    }


@pytest.fixture
def customer(client):
    return new_customer(client)


def assert_problem(response, status: int, code: str, field: str | None = None) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    assert {"type", "title", "status", "detail", "code", "errors"} <= set(body)
    assert (body["status"], body["code"]) == (status, code)
    if field:
        assert field in {e["field"] for e in body["errors"]}
    return body
