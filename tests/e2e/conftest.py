"""The running system for end-to-end tests: real processes, real broker, real PostgreSQL.

Each stack gets its own RabbitMQ vhost and fresh databases, so runs never
see each other's messages or rows. `stack` (services and gateway) serves
most tests; `chain_stack` adds real chain nodes (litecoind, Bitcoin Knots,
anvil with its tokens) and one watcher per node, and is started only by the
first test that asks for it, once per session.
"""

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from kombu import Connection, Exchange

from infra.local.devnet import DEV_CONFIRMATIONS, Devnet
from infra.local.isolation import running_stack
from infra.testhosts.local import TEST_ACCOUNT_KEY
from kernodeck_contracts.events import WatcherStatus

CHAIN_NETWORKS = ("bitcoin", "litecoin", "ethereum")
(CHAIN_CONFIRMATIONS,) = {DEV_CONFIRMATIONS[network] for network in CHAIN_NETWORKS}  # one number on the three


@pytest.fixture(scope="session")
def stack(tmp_path_factory):
    with (
        running_stack(Path(tmp_path_factory.mktemp("stack-logs")), "kd_e2e") as stack,
        watchers_reporting(stack.env["AMQP_URI"]),
    ):
        yield stack


# This stack runs no chain node, so no watcher: a network no watcher reports on is not offered (chain_lagging).
# Its watchers' status messages are sent as theirs are, every few seconds, each network up to date.
WATCHER_STATUS_S = 5.0


@contextmanager
def watchers_reporting(amqp_uri: str) -> Iterator[None]:
    stop = threading.Event()
    exchange = Exchange("chain.events", type="topic", durable=True)

    def report() -> None:
        with Connection(amqp_uri) as connection:
            producer = connection.Producer()
            while True:
                for network in ("bitcoin", "litecoin", "ethereum", "tron", "solana"):
                    status = WatcherStatus(
                        network=network, node_height=1, scanned_height=1, lag_seconds=0, lagging=False
                    )
                    producer.publish(
                        status.to_message(), exchange=exchange, routing_key=status.type, serializer="json",
                        declare=[exchange],
                    )  # fmt: skip
                if stop.wait(WATCHER_STATUS_S):
                    return

    thread = threading.Thread(target=report, name="watchers-reporting", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@contextmanager
def running_devnet(run_dir: Path, networks: tuple[str, ...]) -> Iterator[Devnet]:
    """The nodes of `networks` (those installed), their watchers polling fast, for one test session."""
    devnet = Devnet(run_dir, networks=networks, watcher_poll_s=0.2, watcher_status_s=0.5)
    devnet.start(log=lambda line: None)
    try:
        yield devnet
    finally:
        devnet.stop()


@pytest.fixture(scope="session")
def devnet(tmp_path_factory):
    """litecoind, Bitcoin Knots and anvil (USDT and USDC deployed), as `make run` starts them; those installed."""
    with running_devnet(tmp_path_factory.mktemp("devnet"), CHAIN_NETWORKS) as devnet:
        yield devnet


@pytest.fixture(scope="session")
def chain_stack(devnet, tmp_path_factory):
    """The whole system with a watcher per running node. The Bitcoin and Ethereum watchers poll only every
    30 s and otherwise wake on the node's block notifications (ZMQ, newHeads), so a payment still in
    bitcoind's mempool is found by "J'ai payé" alone."""
    if not devnet.up:
        pytest.skip(f"no chain node is installed: {devnet.skipped}")
    log_dir = Path(tmp_path_factory.mktemp("chain-stack-logs"))
    env = devnet.env()
    notified = {"watcher-bitcoin": "WATCHER_BITCOIN_ZMQ_URL", "watcher-ethereum": "WATCHER_ETHEREUM_WS_URL"}
    slow = {process: {"WATCHER_POLL_INTERVAL_S": "30"} for process, url in notified.items() if env.get(url)}
    with running_stack(log_dir, "kd_chain", env, devnet.up, process_env=slow) as stack:
        yield stack


@pytest.fixture
def client(stack):
    with httpx.Client(base_url=stack.url, timeout=10) as http:
        yield http


def post_when_let_in(client: httpx.Client, path: str, body: dict, tries: int = 5, **kwargs) -> httpx.Response:
    """POST, and again after the wait the answer names while the password hashing pool is full (503 with
    Retry-After), as a client should. Any other answer, a 503 without Retry-After (a timeout) included,
    is returned as it is."""
    for _ in range(tries):
        response = client.post(path, json=body, **kwargs)
        if response.status_code != 503 or "retry-after" not in response.headers:
            return response
        time.sleep(int(response.headers["retry-after"]))
    return response


def new_customer(client: httpx.Client, password: str = "correct horse battery staple", ssh_key: bool = True) -> dict:
    """Register and log in a fresh customer, with an SSH key on the account unless told; the account and a bearer
    header."""
    email = f"c{uuid.uuid4().hex[:10]}@example.org"
    registered = post_when_let_in(
        client, "/api/v1/accounts", {"first_name": "Lan", "last_name": "Nguyen", "email": email, "password": password}
    )
    assert registered.status_code == 201, registered.text
    session = post_when_let_in(client, "/api/v1/sessions", {"email": email, "password": password})
    assert session.status_code == 201, session.text
    headers = {"Authorization": f"Bearer {session.json()['token']}"}
    if ssh_key:
        keyed = client.put("/api/v1/me/ssh-key", json={"ssh_public_key": TEST_ACCOUNT_KEY}, headers=headers)
        assert keyed.status_code == 200, keyed.text
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
