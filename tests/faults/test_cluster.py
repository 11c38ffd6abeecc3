"""The distributed engine, exercised: RabbitMQ as a three-node cluster with quorum queues (as in production),
two replicas of payments and of the Litecoin watcher, and in the middle of a burst of payments one broker node
stopped, one payments replica and the active watcher replica killed (-9). The books are checked from the
databases as the other scenarios check them: every transfer credited once, nothing lost, no event left
unsent, nothing set aside as a dead letter; the queues still have their leaders and no messages stranded.

Measured and printed with the suite's table: payments settled, the time from the node's stop to the first
request through the gateway that every service answers again (/readyz), to the first settlement after it,
and to the last.
"""

import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from infra.local.devnet import Devnet
from infra.local.isolation import running_stack
from infra.local.stack import Process, Stack, free_port, metrics_show
from tests.faults.books import Sent, audit, query
from tests.faults.cluster import own_cluster
from tests.faults.conftest import CONFIRMATIONS, NETWORK, NOTES, TABLE, System, wait_for
from tests.faults.servers import own_postgres

WATCHER = f"watcher-{NETWORK}"
CUSTOMERS = 4  # each with three orders and a top-up: 16 payments


def metrics_port_key(name: str) -> str:
    return "WATCHER_METRICS_PORT" if name.startswith("watcher-") else f"{name.upper()}_METRICS_PORT"


def replica(stack: Stack, name: str) -> Process:
    """A second process of `name` (same settings and database, its own metrics port), started."""
    original = stack.process(name)
    env = {**original.env, metrics_port_key(name): str(free_port())}
    second = Process(f"{name}-2", original.argv, env, stack.log_dir / f"{name}-2.log" if stack.log_dir else None)
    stack.processes[second.name] = second
    second.start()
    return second


def ready(process: Process) -> bool:
    port = process.env[metrics_port_key(process.name.removesuffix("-2"))]
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def active_watcher(stack: Stack) -> Process:
    """The watcher replica that holds the scan lock (its metrics say so)."""
    sample = f'kernodeck_watcher_active{{network="{NETWORK}"}} 1.0'
    return wait_for(
        lambda: next((p for p in (stack.processes[WATCHER], stack.processes[f"{WATCHER}-2"])
                      if metrics_show(p.env["WATCHER_METRICS_PORT"], sample)), None),
        30, "a watcher replica holding the scan lock",
    )  # fmt: skip


@pytest.fixture(scope="module")
def clustered(tmp_path_factory):
    root = Path(tmp_path_factory.mktemp("cluster"))
    devnet = Devnet(root / "devnet", networks=(NETWORK,), watcher_poll_s=0.2, watcher_status_s=0.5)
    with own_cluster() as cluster, own_postgres() as postgres:
        devnet.start(log=lambda line: None)
        try:
            if NETWORK not in devnet.up:
                pytest.skip(f"{NETWORK}: {devnet.skipped.get(NETWORK, 'not installed')}")
            devnet.nodes[NETWORK].mine(150)
            env = {**devnet.env(), "GATEWAY_RPC_TIMEOUT_S": "30"}
            with (
                running_stack(
                    root / "logs",
                    "kd_cluster",
                    env,
                    (NETWORK,),
                    broker=cluster.amqp_uri,
                    pg_admin_url=postgres.admin_url,
                ) as stack,
                httpx.Client(base_url=stack.url, timeout=60) as client,
            ):
                seconds = [replica(stack, "payments"), replica(stack, WATCHER)]
                wait_for(lambda: all(ready(p) for p in seconds), 120, "the second replicas ready")
                yield System(stack, devnet, cluster, postgres, client), cluster
        finally:
            devnet.stop()


class Probe:
    """From `since`, the first moment /readyz answers 200 (every service answers an RPC through the gateway)."""

    def __init__(self, url: str, since: float):
        self.recovered: float | None = None
        self._url, self._since = url, since
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        deadline = self._since + 300
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self._url}/readyz", timeout=5).status_code == 200:
                    self.recovered = time.monotonic() - self._since
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)


def settled_times(system: System, sent: list[Sent]) -> list[float]:
    """When each payment of `sent` settled, as seconds since the epoch (payments' settled_at)."""
    rows = query(
        system.databases["payments"],
        "SELECT extract(epoch FROM settled_at) FROM payment_intents WHERE id = ANY(:ids) AND settled_at IS NOT NULL",
        ids=[s.intent for s in sent],
    )
    return sorted(float(t) for (t,) in rows)


def test_a_broker_node_and_a_replica_of_payments_and_of_the_watcher_stopped_mid_burst(clustered):
    system, cluster = clustered
    started = time.monotonic()
    payments = [p for _ in range(CUSTOMERS) for p in system.batch(orders=3, topups=1)]
    half = len(payments) // 2
    sent = system.send(payments[:half])
    system.mine(1)
    sent += system.send(payments[half:])

    # The node leading payments' queue of confirmed transfers, the payments replica and the active watcher.
    queues = cluster.quorum_queues()
    [confirmed] = [q for name, q in queues.items() if name.startswith("evt-chain-transfer_confirmed--payments.")]
    assert confirmed["type"] == "quorum" and len(confirmed["members"]) == 3
    leader = next(n for n in cluster.nodes if n.node == confirmed["leader"])
    watcher = active_watcher(system.stack)
    stopping = time.monotonic()
    cluster.stop(leader)  # returns once the node is down: its connections are gone, its replicas with it
    down_wall, down = time.time(), time.monotonic()
    for process in (system.stack.processes["payments"], watcher):
        process.popen.send_signal(signal.SIGKILL)
        process.popen.wait()
    probe = Probe(system.stack.url, down)
    for _ in range(CONFIRMATIONS + 1):  # the burst confirms while the cluster and the replicas recover
        system.mine(1)
        time.sleep(1)

    tally = audit(
        system.databases,
        "3-node cluster: a node, a payments and a watcher replica stopped",
        sent,
        started,
        settle_s=240,
    )
    TABLE.append(tally)
    assert (tally.lost, tally.double, tally.faults) == (0, 0, []), tally
    assert tally.credited_once == len(sent)

    settled = settled_times(system, sent)
    after_stop = [t - down_wall for t in settled if t > down_wall]
    queues = cluster.quorum_queues()
    running = {n.node for n in cluster.running()}
    assert all(q["leader"] in running for q in queues.values() if q["type"] == "quorum"), queues
    assert not [n for n, q in queues.items() if n.endswith(".dead-letters") and q["messages"]], queues
    assert probe.recovered is not None, "the gateway's /readyz never answered 200 again"
    assert after_stop, "every payment settled before the stop: no burst went through the faults"
    NOTES.append(
        f"3-node cluster: {len(sent)} payments sent, {tally.credited_once} settled once, {tally.lost} lost, "
        f"{tally.double} twice. The node leading payments' queue stopped in {down - stopping:.1f} s; from then (a "
        f"payments and the active watcher replica killed, the confirming blocks mined): every service answering "
        f"through the gateway after {probe.recovered:.1f} s, the first settlement after {after_stop[0]:.1f} s and "
        f"the last after {after_stop[-1]:.1f} s ({len(after_stop)} of {len(sent)} settled after the stop); the "
        f"scenario {time.monotonic() - started:.0f} s"
    )
