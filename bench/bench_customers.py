"""32 customers at once, each quoting, recording an order and asking for its payment instructions (LTC), over
and over, on `make run`'s embedded default (SQLite) and on PostgreSQL: each step's p50/p99 and the flows a
second, against its floor measured on the same machine in the same run, at the same concurrency (a bare FastAPI
route, the gateway's RPC client to a bare AMQP responder), with the machine's speed before and after. Where the
time went: each process's CPU a flow, and each entrypoint's mean time in its worker (the services' own metrics);
a step's time beyond its workers' is the broker's, the hops' and the queues' in front of the workers.

    python bench/bench_customers.py [--store sqlite|postgresql] [--rounds N] [--profile DIR]

`--profile DIR`: each service and the gateway sampled by py-spy over the measured rounds only, DIR/<store>-
<process>.txt in py-spy's collapsed form, and each one's heaviest frames of our code, and leaves, printed.
"""

import argparse
import asyncio
import collections
import contextlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aio_pika
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_amqp_baseline import bare_amqp_roundtrip
from bench.bench_gateway import bare_http_server, http_load
from bench.bench_transport import machine_line
from bench.measure import percentiles
from infra.local.isolation import running_stack
from infra.local.stack import BIN
from infra.testhosts.local import LOCAL_GPUS, TEST_ACCOUNT_KEY
from tests.e2e.conftest import watchers_reporting

CUSTOMERS = 32
ROUNDS = 5  # measured flows per customer, after one unmeasured
TARGET_P99_MS = 300
QUOTE = {"model": "h100", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
METHOD = {"asset": "LTC", "network": "litecoin"}
STEPS = ("quote", "order", "instructions")
# Each of the customers' intents holds its order's GPU: 4 nodes of 64 h100s (the test host's and 3 ports more).
CAPACITY = {"gpus": {**LOCAL_GPUS, "h100": 64}, "extra_nodes": {"h100": 3}}
# Several flows through the gateway for a customer every second, from one address: the per-account and
# per-address limits meant for people are lifted; on a loaded machine a call may take longer than 3 s; and the
# customers' passwords, not measured here, are hashed cheaply.
STACK_ENV = {
    "PAYMENTS_OPEN_INTENTS_PER_ACCOUNT": "1000",
    "GATEWAY_RPC_TIMEOUT_S": "30",
    "ACCOUNTS_ARGON2_TIME_COST": "1",
    "ACCOUNTS_ARGON2_MEMORY_COST_KIB": "1024",
    "PROVISIONING_SWEEP_INTERVAL_S": "5",  # make run's, not the test stacks' 0.5
}
PROFILED = ("gateway", "orders", "payments", "provisioning", "catalog")
SERVICES = ("catalog", "orders", "payments", "provisioning")
ENTRYPOINT = re.compile(r'^kernodeck_entrypoint_seconds_(sum|count)\{entrypoint="([^"]+)",service="([^"]+)"\} (\S+)$')
PASSWORD = "benchmark password 0123"


async def customer(url: str, n: int) -> dict:
    """A new account, logged in, with the SSH key its orders are delivered with: its Authorization header."""
    email = f"customer-{n}-{time.monotonic_ns()}@example.org"
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        account = {"first_name": "C", "last_name": str(n), "email": email, "password": PASSWORD}
        for path, body in (("/api/v1/accounts", account), ("/api/v1/sessions", {"email": email, "password": PASSWORD})):
            while (response := await client.post(path, json=body)).status_code == 503:  # the password queue
                await asyncio.sleep(float(response.headers.get("retry-after", 1)))
            if response.status_code != 201:
                raise RuntimeError(f"{path}: {response.status_code} {response.text}")
        auth = {"Authorization": f"Bearer {response.json()['token']}"}
        await client.put("/api/v1/me/ssh-key", json={"ssh_public_key": TEST_ACCOUNT_KEY}, headers=auth)
    return auth


async def flows(url: str, auths: list[dict], rounds: int) -> dict:
    """Every customer's flows at once: quote, order, instructions, `rounds` times (after an unmeasured one)."""
    times: dict[str, list[float]] = {step: [] for step in STEPS}
    limits = httpx.Limits(max_connections=len(auths), max_keepalive_connections=len(auths))
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def step(name: str, path: str, body: dict, auth: dict, expected: int, measured: bool) -> dict:
            started = time.perf_counter()
            response = await client.post(path, json=body, headers=auth)
            if measured:
                times[name].append(time.perf_counter() - started)
            if response.status_code != expected:
                raise RuntimeError(f"{path}: {response.status_code} {response.text}")
            return response.json()

        async def flow(auth: dict, measured: bool) -> None:
            await step("quote", "/api/v1/quotes", QUOTE, auth, 200, measured)
            order = await step("order", "/api/v1/orders", QUOTE, auth, 201, measured)
            payment = await step("instructions", f"/api/v1/orders/{order['id']}/payments", METHOD, auth, 201, measured)
            if payment["order_id"] != order["id"] or payment["amount_usd"] != order["summary"]["total_usd"]:
                raise RuntimeError(f"instructions of another order or amount: {payment} for {order}")

        async def customer_flows(auth: dict) -> None:
            for _ in range(rounds):
                await flow(auth, measured=True)

        await asyncio.gather(*(flow(auth, measured=False) for auth in auths))
        started = time.perf_counter()
        await asyncio.gather(*(customer_flows(auth) for auth in auths))
        elapsed = time.perf_counter() - started
    return {
        "flows_per_s": len(auths) * rounds / elapsed,
        "requests_per_s": len(auths) * rounds * len(STEPS) / elapsed,
        **{name: {**percentiles(samples), "n": len(samples)} for name, samples in times.items()},
    }


async def floor(amqp_uri: str, bare_url: str, total: int) -> dict:
    """The bare FastAPI route and the bare AMQP round trip at the customers' concurrency."""
    return {
        "bare FastAPI constant": await http_load(bare_url, "/constant", QUOTE, CUSTOMERS, total),
        "bare AMQP request/reply": await bare_amqp_roundtrip(CUSTOMERS, total, url=amqp_uri),
    }


def entrypoint_totals(stack) -> dict[tuple[str, str], list[float]]:
    """Each service's entrypoints as its metrics count them so far: {(service, entrypoint): [seconds, calls]}."""
    totals: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for service in SERVICES:
        port = stack.processes[service].env[f"{service.upper()}_METRICS_PORT"]
        for row in httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text.splitlines():
            if found := ENTRYPOINT.match(row):
                kind, entrypoint, name, value = found.groups()
                totals[name, entrypoint][kind == "count"] += float(value)
    return totals


def cpu_seconds(stack) -> dict[str, float]:
    """Each process's user and system CPU seconds so far, the gateway's and accounts' among them."""
    ticks = os.sysconf("SC_CLK_TCK")
    seconds = {}
    for name in (*PROFILED, "accounts"):
        fields = Path(f"/proc/{stack.processes[name].popen.pid}/stat").read_text().rsplit(")", 1)[1].split()
        seconds[name] = (int(fields[11]) + int(fields[12])) / ticks
    return seconds


def cpu_per_flow(before: dict, after: dict, flows: int) -> list[str]:
    """Each process's CPU a flow, and the floor that CPU sets: the customers never pause, so a flow takes
    CUSTOMERS / (flows a second) (Little's law), and the flows a second are at most the CPUs over the CPU a flow,
    even with every CPU ours and the broker, the database and the customers' client costing nothing."""
    spent = sorted(((after[name] - before[name]) / flows, name) for name in before)
    cpus, total = os.cpu_count(), sum(s for s, _ in spent)
    target_flow_s = len(STEPS) * TARGET_P99_MS / 1000 / 2  # each request's mean at most half its p99 target
    return [
        "  CPU ms a flow: " + ", ".join(f"{name} {s * 1000:.1f}" for s, name in reversed(spent)),
        f"  floor from that CPU: {total * 1000:.1f} ms a flow on {cpus} CPUs wholly ours -> at most "
        f"{cpus / total:.0f} flows/s -> {CUSTOMERS} customers wait >= {CUSTOMERS * total / cpus * 1000:.0f} ms a "
        f"flow ({CUSTOMERS * total / cpus / len(STEPS) * 1000:.0f} ms a request on average); a request's mean "
        f"within half of {TARGET_P99_MS} ms needs <= {target_flow_s * cpus / CUSTOMERS * 1000:.1f} ms CPU a flow "
        f"on {cpus} CPUs, or {total * CUSTOMERS / target_flow_s:.1f} CPUs at this cost",
    ]


def time_in_services(before: dict, after: dict) -> list[str]:
    """Where the flows' time went: each entrypoint's mean time in its worker over the measured rounds (from the
    service's own metrics), the busiest first; what a step takes beyond them is the broker, the queues in front
    of the workers and the gateway."""
    spent = []
    for key, (seconds, calls) in after.items():
        earlier = before.get(key, [0.0, 0.0])
        if calls > earlier[1]:
            spent.append((seconds - earlier[0], calls - earlier[1], key))
    spent.sort(reverse=True)
    return [
        "  in the services' workers (mean ms a call x calls): "
        + ", ".join(f"{service}.{entrypoint} {s / n * 1000:.1f} x {n:.0f}" for s, n, (service, entrypoint) in spent[:8])
    ]


class Profiles:
    """py-spy sampling each of PROFILED's processes while it is entered (nothing when `folder` is None)."""

    def __init__(self, stack, folder: Path | None, store: str):
        self.stack, self.folder, self.store = stack, folder, store
        self.samplers: dict[str, subprocess.Popen] = {}

    def path(self, name: str) -> Path:
        return self.folder / f"{self.store}-{name}.txt"

    def __enter__(self):
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
            for name in PROFILED:
                pid = str(self.stack.processes[name].popen.pid)
                argv = [str(BIN / "py-spy"), "record", "--pid", pid, "--rate", "200", "--format", "raw"]
                argv += ["--output", str(self.path(name)), "--nonblocking"]
                self.samplers[name] = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)  # py-spy attached
        return self

    def __exit__(self, *exc):
        for sampler in self.samplers.values():
            sampler.send_signal(signal.SIGINT)  # py-spy writes what it sampled
        for sampler in self.samplers.values():
            sampler.wait(timeout=60)

    def report(self, top: int = 8) -> list[str]:
        lines = []
        for name in self.samplers:
            lines += [f"  {self.store} {name}: {line}" for line in heaviest(self.path(name), top)]
        return lines


def heaviest(path: Path, top: int) -> list[str]:
    """A py-spy collapsed profile's frames of our own code (kernodeck_*) in the most samples (inclusive, each
    frame once a sample), with their share of the process's samples; then the leaf frames (self) likewise."""
    inclusive: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    total = 0
    for row in path.read_text().splitlines() if path.exists() else []:
        stack, _, samples = row.rpartition(" ")
        frames = stack.split(";")[1:]  # the thread's own name left out
        total += int(samples)
        for frame in {frame for frame in frames if "kernodeck_" in frame}:
            inclusive[_short(frame)] += int(samples)
        if frames:
            leaves[_short(frames[-1])] += int(samples)
    if not total:
        return ["no samples"]

    def shares(counts: collections.Counter) -> str:
        return ", ".join(f"{frame} {n / total:.0%}" for frame, n in counts.most_common(top))

    return [f"{total} samples; ours: {shares(inclusive)}", f"  leaves: {shares(leaves)}"]


def _short(frame: str) -> str:
    """`function (path/to/module.py:line)` as `function (module.py)`."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rsplit('/', 1)[-1].split(':')[0]})" if where else name


@contextlib.asynccontextmanager
async def watchers_listening(amqp_uri: str):
    """What make run's chain watchers do with payments' `address_watched` as far as payments sees: take it (the
    stack here has no watcher; an event no queue takes stays in payments' outbox and is tried again and again)."""
    connection = await aio_pika.connect(amqp_uri)
    try:
        channel = await connection.channel()
        exchange = await channel.declare_exchange("payments.events", aio_pika.ExchangeType.TOPIC, durable=True)
        queue = await channel.declare_queue(exclusive=True, auto_delete=True)
        await queue.bind(exchange, "address_watched")
        await queue.consume(lambda message: None, no_ack=True)
        yield
    finally:
        await connection.close()


def customers_bench(log_dir: Path, stores=("sqlite", "postgresql"), rounds: int = ROUNDS, profile=None):
    """Yields its lines as they are measured."""
    yield machine_line()
    bare, bare_url = bare_http_server()
    try:
        for store in stores:
            options = {"sqlite": store == "sqlite", **CAPACITY}
            with (
                running_stack(log_dir / store, f"kd_bench_cust_{store[:2]}", STACK_ENV, **options) as stack,
                watchers_reporting(stack.env["AMQP_URI"]),
            ):

                async def run(stack=stack, store=store) -> tuple[dict, dict, list[str]]:
                    semaphore = asyncio.Semaphore(4)

                    async def one(n: int) -> dict:
                        async with semaphore:
                            return await customer(stack.url, n)

                    auths = await asyncio.gather(*(one(n) for n in range(CUSTOMERS)))
                    bare_total = CUSTOMERS * rounds * len(STEPS)
                    baseline = await floor(stack.env["AMQP_URI"], bare_url, bare_total)
                    async with watchers_listening(stack.env["AMQP_URI"]):
                        with Profiles(stack, profile, store) as profiles:
                            before, cpu = entrypoint_totals(stack), cpu_seconds(stack)
                            result = await flows(stack.url, auths, rounds)
                            spent = cpu_per_flow(cpu, cpu_seconds(stack), len(auths) * rounds)
                            spent += time_in_services(before, entrypoint_totals(stack))
                    return result, baseline, spent + profiles.report()

                result, baseline, explained = asyncio.run(run())
            yield from report(store, result, baseline) + explained
    finally:
        bare.terminate()
        bare.wait()
    yield machine_line()


def report(store: str, result: dict, baseline: dict) -> list[str]:
    lines = [
        f"{CUSTOMERS} customers at once on {store}, each quote -> order -> {METHOD['asset']} instructions: "
        f"{result['flows_per_s']:.1f} flows/s ({result['requests_per_s']:.0f} requests/s)"
    ]
    for step in STEPS:
        p = result[step]
        verdict = ""
        if step != "quote":
            verdict = f"  (target p99 <= {TARGET_P99_MS} ms: {'met' if p['p99_ms'] <= TARGET_P99_MS else 'NOT met'})"
        lines.append(f"  {step:<13} p50 {p['p50_ms']:7.1f} ms  p99 {p['p99_ms']:7.1f} ms  (n={p['n']}){verdict}")
    for label, p in baseline.items():
        lines.append(
            f"  floor, {label:<24} c={CUSTOMERS}: p50 {p['p50_ms']:6.1f} ms  p99 {p['p99_ms']:6.1f} ms  "
            f"{p['requests_per_s']:.0f}/s"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=("sqlite", "postgresql"), action="append", help="one store (default: both)")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"measured flows per customer ({ROUNDS})")
    parser.add_argument("--profile", type=Path, help="py-spy profiles of each service into this folder")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as logs:
        stores = tuple(arguments.store or ("sqlite", "postgresql"))
        for line in customers_bench(Path(logs), stores, arguments.rounds, arguments.profile):
            print(line, flush=True)


if __name__ == "__main__":
    main()
