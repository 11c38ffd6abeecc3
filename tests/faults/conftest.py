"""One running system for every fault scenario: real processes on a broker and a PostgreSQL of the suite's own.

The stack (every service, the gateway, a Litecoin watcher) runs as `make run`
runs it, next to a litecoind started by the same code, on a RabbitMQ node
and a PostgreSQL cluster that the suite starts in a temporary directory
(servers.py), so that restarting them, or killing their connections,
disturbs no other test on the machine. Scenarios share it: each pays its own
orders and top-ups, and the books are checked on what each sent.
"""

import signal
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import httpx
import pytest

from infra.local.devnet import DEV_CONFIRMATIONS, Devnet
from infra.local.isolation import running_stack
from infra.local.stack import Stack
from infra.testhosts.local import TEST_ACCOUNT_KEY
from tests.faults.books import Sent, Tally
from tests.faults.servers import Broker, Postgres, own_broker, own_postgres

NETWORK, ASSET = "litecoin", "LTC"
CONFIRMATIONS = DEV_CONFIRMATIONS[NETWORK]
BATCH_ORDER = {"model": "h100", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
TABLE: list[Tally] = []
NOTES: list[str] = []  # what a scenario measured beyond the table (test_cluster.py's recovery times)


@dataclass
class System:
    stack: Stack
    devnet: Devnet
    broker: Broker
    postgres: Postgres
    client: httpx.Client
    customers: list[dict] = field(default_factory=list)

    @property
    def node(self):
        return self.devnet.nodes[NETWORK]

    @property
    def databases(self) -> dict[str, str]:
        """Every process's database URL, by process name."""
        urls = {name: self.stack.env[f"{name.upper()}_DATABASE_URL"] for name in self.stack.services}
        urls[f"watcher-{NETWORK}"] = self.stack.env[f"WATCHER_{NETWORK.upper()}_DATABASE_URL"]
        return urls

    def database_names(self) -> list[str]:
        return [url.rsplit("/", 1)[1] for url in self.databases.values()]

    def kill(self, name: str) -> None:
        """kill -9, as a crash or the OOM killer would."""
        process = self.stack.process(name)
        process.popen.send_signal(signal.SIGKILL)
        process.popen.wait()

    def restart(self, name: str) -> None:
        self.stack.process(name).start()
        self.stack.wait_ready(120)

    def mine(self, blocks: int = 1) -> None:
        self.node.mine(blocks)

    def customer(self) -> dict:
        email = f"f{uuid.uuid4().hex[:10]}@example.org"
        password = "correct horse battery staple"
        body = {"first_name": "Lan", "last_name": "Nguyen", "email": email, "password": password}
        account = self.call("POST", "/api/v1/accounts", 201, json=body)
        token = self.call("POST", "/api/v1/sessions", 201, json={"email": email, "password": password})["token"]
        headers = {"Authorization": f"Bearer {token}"}
        self.call("PUT", "/api/v1/me/ssh-key", 200, json={"ssh_public_key": TEST_ACCOUNT_KEY}, headers=headers)
        return {"id": account["id"], "headers": headers}

    def call(self, method: str, path: str, status: int, **kwargs) -> dict:
        response = self.client.request(method, path, **kwargs)
        assert response.status_code == status, f"{method} {path}: {response.status_code} {response.text}"
        return response.json()

    def order(self, customer: dict, order: dict = BATCH_ORDER) -> dict:
        return self.call("POST", "/api/v1/orders", 201, json=order, headers=customer["headers"])

    def batch(self, orders: int = 3, topups: int = 1) -> list[tuple[dict, str, str]]:
        """Payments of a fresh customer's orders and top-ups: (payment, purpose, order or top-up id)."""
        customer = self.customer()
        method = {"asset": ASSET, "network": NETWORK}
        payments = []
        for _ in range(orders):
            order = self.order(customer)
            payment = self.call(
                "POST", f"/api/v1/orders/{order['id']}/payments", 201, json=method, headers=customer["headers"]
            )
            payments.append((payment, "order", order["id"]))
        for _ in range(topups):
            topup = self.call(
                "POST", "/api/v1/topups", 201, json={"amount_usd": "100", **method}, headers=customer["headers"]
            )
            payments.append((topup["payment"], "topup", topup["id"]))
        return payments

    def send(self, payments: list[tuple[dict, str, str]]) -> list[Sent]:
        """Pay each in full from the node's wallet, in the mempool until the next block."""
        sent = []
        for payment, purpose, reference in payments:
            txid = self.node.rpc("sendtoaddress", payment["address"], str(Decimal(payment["amount"])))
            sent.append(Sent(txid, purpose, reference, payment["id"]))
        return sent


def wait_for(predicate, timeout: float, what: str, pause: float = 0.1):
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(pause)
    return value


@pytest.fixture(scope="session")
def system(tmp_path_factory):
    root = Path(tmp_path_factory.mktemp("faults"))
    devnet = Devnet(root / "devnet", networks=(NETWORK,), watcher_poll_s=0.2, watcher_status_s=0.5)
    with own_broker() as broker, own_postgres() as postgres:
        devnet.start(log=lambda line: None)
        try:
            if NETWORK not in devnet.up:
                pytest.skip(f"{NETWORK}: {devnet.skipped.get(NETWORK, 'not installed')}")
            devnet.nodes[NETWORK].mine(150)  # coins to spend: the node starts with one spendable coinbase
            # The gateway waits for the services as long as the 1,000 concurrent intents take to queue through
            # payments on a loaded 2-core machine, so that a slow answer is not taken for a lost one.
            # One customer opens the 1,000 concurrent intents: the per-account limit of open intents is lifted.
            env = {**devnet.env(), "GATEWAY_RPC_TIMEOUT_S": "120", "PAYMENTS_OPEN_INTENTS_PER_ACCOUNT": "1000"}
            with (
                running_stack(
                    root / "logs",
                    "kd_faults",
                    env,
                    (NETWORK,),
                    broker=broker.amqp_uri,
                    pg_admin_url=postgres.admin_url,
                ) as stack,
                httpx.Client(base_url=stack.url, timeout=60) as client,
            ):
                yield System(stack, devnet, broker, postgres, client)
        finally:
            devnet.stop()


def pytest_terminal_summary(terminalreporter):
    if TABLE:
        terminalreporter.write_line("")
        for line in Tally.table(TABLE):
            terminalreporter.write_line(line)
    for note in NOTES:
        terminalreporter.write_line(note)
