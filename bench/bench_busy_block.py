"""A busy block: one Bitcoin transaction pays 200 orders; from the block that confirms it to the 200th `paid`.

On real regtest bitcoind, the watcher, payments and orders each one process,
on PostgreSQL and on the embedded SQLite default. The bitcoin node's wallet
pays every order's instructions in one `sendmany`; the first block gives
each transfer one confirmation; once payments shows all of them confirming,
the last block is mined and the events are timed on the broker as they pass:
the watcher's `transfer_confirmed`, payments' `payment_settled`, orders'
`paid`, the first and the last of each, which says which stage the time goes
to. The baseline, measured in the same run on the same stack: one payment
alone, the same way (target: all 200 paid within 1 s, 200 orders a second).
Beside them, the CPU seconds each of the three processes spent from the
block to the last `paid` (what a loaded machine's wall clock hides).

Alone: `python bench/bench_busy_block.py [--store postgresql|sqlite]
[--profile DIR]`; with --profile, each of the three processes runs cProfile
over the busy block only (bench/profiling) and writes DIR/<store>-<process>.prof.
"""

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

import aio_pika
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_payments import ORDER
from bench.bench_transport import machine_line
from bench.measure import bearer_for_new_customer
from infra.local.devnet import DEV_CONFIRMATIONS, Devnet
from infra.local.isolation import running_stack

ORDERS = 200
TARGET_S = 1.0
SLOW_POLL_S = 30
PROFILED = ("watcher-bitcoin", "payments", "orders")
PROFILING = Path(__file__).resolve().parent / "profiling"
STAGES = (
    ("chain.events", "transfer_confirmed", "watcher: transfer_confirmed"),
    ("payments.events", "payment_settled", "payments: payment_settled"),
    ("orders.events", "order_status_changed", "orders: paid"),
)


def busy_block(log_dir: Path, stores=("postgresql", "sqlite"), profile_dir: Path | None = None) -> list[str]:
    lines = [machine_line()]
    for store in stores:
        devnet = Devnet(log_dir / store / "devnet", networks=("bitcoin",), watcher_status_s=1.0)
        env = devnet.start(log=lambda line: None)
        try:
            if not devnet.up:
                return [f"busy block: skipped, no bitcoind ({devnet.skipped})"]
            # One customer opens all the intents: the per-account limit of open ones is lifted; and opening them
            # on a loaded machine may take the gateway's calls longer than their usual 5 s.
            process_env = {
                "watcher-bitcoin": {"WATCHER_POLL_INTERVAL_S": str(SLOW_POLL_S)},
                "payments": {"PAYMENTS_OPEN_INTENTS_PER_ACCOUNT": str(ORDERS + 1)},
                "gateway": {"GATEWAY_RPC_TIMEOUT_S": "60"},
            }
            if profile_dir is not None:
                for name in PROFILED:
                    process_env.setdefault(name, {}).update(
                        {
                            "PYTHONPATH": str(PROFILING),
                            "KERNODECK_PROFILE_OUT": str(profile_dir / f"{store}-{name}.prof"),
                        }
                    )
            # Every paid order holds its GPU: three more 64-GPU rtx4090 nodes than the stack's one.
            options = {"process_env": process_env, "extra_nodes": {"rtx4090": 3}, "sqlite": store == "sqlite"}
            with running_stack(log_dir / store, f"kd_bench_busy_{store[:2]}", env, ("bitcoin",), **options) as stack:
                lines += asyncio.run(_measure(stack, devnet.nodes["bitcoin"], store, profile_dir is not None))
        finally:
            devnet.stop()
    return [*lines, machine_line()]


async def _measure(stack, node, store: str, profiling: bool) -> list[str]:
    auth = await bearer_for_new_customer(stack.url)
    miner = node.rpc("getnewaddress", "", "bech32")
    async with (
        _Stages(stack.env["AMQP_URI"]) as stages,
        httpx.AsyncClient(base_url=stack.url, headers=auth, timeout=60) as client,
    ):
        alone, _, _ = await _block(client, stages, node, miner, 1)
        pids = {name: stack.processes[name].popen.pid for name in PROFILED}
        busy, cpu, machine = await _block(client, stages, node, miner, ORDERS, pids, profiling)
    last = busy["orders: paid"][1]
    rate = ORDERS / last
    lines = [
        f"busy block on {store}: {ORDERS} orders paid by one transaction, the last {last * 1000:.0f} ms after "
        f"the confirming block ({rate:.0f} orders/s; one payment alone: {alone['orders: paid'][1] * 1000:.0f} ms, "
        f"{last / alone['orders: paid'][1]:.1f}x) (target <= {TARGET_S:g} s): {'met' if last <= TARGET_S else 'NOT met'}"
    ]
    for _, _, stage in STAGES:
        first, final = busy[stage]
        lines.append(f"  {stage:<30} first {first * 1000:6.0f} ms  last {final * 1000:6.0f} ms")
    lines.append("  CPU meanwhile: " + ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in cpu.items()))
    # Busy near CPUs x seconds: the machine, not a wait in one of the three, set the pace.
    lines.append(
        f"  the whole machine meanwhile (the broker and the database included): {machine:.2f} of "
        f"{os.cpu_count() * last:.2f} CPU-seconds busy ({os.cpu_count()} CPUs)"
    )
    return lines


async def _block(
    client, stages, node, miner: str, count: int, pids: dict[str, int] | None = None, profiling: bool = False
) -> tuple[dict[str, tuple[float, float]], dict[str, float], float]:
    """Seconds from mining the confirming block to the first and the last event of each stage; the CPU seconds
    of the processes of `pids` (by name) meanwhile, each profiled with `profiling` (see bench/profiling); the
    CPU seconds the whole machine was busy meanwhile."""
    pids = pids or {}
    payments = [await _intent(client) for _ in range(count)]
    outputs = {p["address"]: str(Decimal(int(p["amount_base_units"])).scaleb(-8)) for p in payments}
    node.rpc("sendmany", "", outputs)
    node.rpc("generatetoaddress", DEV_CONFIRMATIONS["bitcoin"] - 1, miner)
    await _all_confirming(client, payments)
    addresses = set(outputs)
    orders = {p["order_id"] for p in payments}
    ids = {p["id"] for p in payments}
    # Each stage's event of one of these orders, by what tells them apart (the outbox delivers at least once).
    expected = {
        "watcher: transfer_confirmed": lambda body: body.get("address") in addresses and body["address"],
        "payments: payment_settled": lambda body: body.get("payment_id") in ids and body["payment_id"],
        "orders: paid": lambda body: (
            body.get("order_id") in orders and body.get("status") == "paid" and body["order_id"]
        ),
    }
    waits = {stage: stages.expect(stage, count, expected[stage]) for stage in expected}
    profiled = pids if profiling else {}
    _signal(profiled, signal.SIGUSR1)
    cpu_before = {name: _cpu_s(pid) for name, pid in pids.items()}
    machine_before = _machine_busy_s()
    started = time.perf_counter()
    node.rpc("generatetoaddress", 1, miner)
    times = {stage: await asyncio.wait_for(wait, timeout=120) for stage, wait in waits.items()}
    cpu = {name: _cpu_s(pid) - cpu_before[name] for name, pid in pids.items()}
    machine = _machine_busy_s() - machine_before
    _signal(profiled, signal.SIGUSR2)
    return {stage: (first - started, last - started) for stage, (first, last) in times.items()}, cpu, machine


def _cpu_s(pid: int) -> float:
    """The process's user and system CPU seconds so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _machine_busy_s() -> float:
    """The CPU seconds all of the machine's CPUs were busy so far (or taken by the hypervisor: steal)."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, Path("/proc/stat").read_text().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _signal(pids: dict[str, int], signum: int) -> None:
    """Start or stop the profiles of processes started with bench/profiling (the signal would stop another)."""
    for pid in pids.values():
        os.kill(pid, signum)


async def _intent(client) -> dict:
    order = (await client.post("/api/v1/orders", json=ORDER)).json()
    response = await client.post(f"/api/v1/orders/{order['id']}/payments", json={"asset": "BTC", "network": "bitcoin"})
    if response.status_code != 201:
        raise RuntimeError(f"intent: {response.status_code} {response.text}")
    return {**response.json(), "order_id": order["id"]}


async def _all_confirming(client, payments: list[dict]) -> None:
    deadline = time.monotonic() + 120
    waiting = list(payments)
    while waiting:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(waiting)} payments never showed their first confirmation")
        answers = [(await client.get(f"/api/v1/payments/{p['id']}")).json() for p in waiting]
        waiting = [p for p, a in zip(waiting, answers, strict=True) if not a["transfers"]]
        await asyncio.sleep(0.2)


class _Stages:
    """Each stage's events on the broker: `expect(stage, count, key)` resolves to the perf_counter times of the
    first and the count-th event with a distinct `key(body)` (falsy: not one of them)."""

    def __init__(self, amqp_uri: str):
        self.amqp_uri = amqp_uri
        self.waiting: dict[str, tuple[int, Callable, dict[str, float], asyncio.Future]] = {}

    async def __aenter__(self):
        self.connection = await aio_pika.connect(self.amqp_uri)
        channel = await self.connection.channel()
        for exchange_name, routing_key, stage in STAGES:
            exchange = await channel.declare_exchange(exchange_name, aio_pika.ExchangeType.TOPIC, durable=True)
            queue = await channel.declare_queue(exclusive=True, auto_delete=True)
            await queue.bind(exchange, routing_key)
            await queue.consume(lambda message, stage=stage: self._on_message(stage, message), no_ack=True)
        return self

    async def __aexit__(self, *exc):
        await self.connection.close()

    def expect(self, stage: str, count: int, key: Callable[[dict], str | bool]) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self.waiting[stage] = (count, key, {}, future)
        return future

    async def _on_message(self, stage: str, message) -> None:
        arrived = time.perf_counter()
        if stage not in self.waiting:
            return
        count, key, times, future = self.waiting[stage]
        if (which := key(json.loads(message.body))) and which not in times and not future.done():
            times[which] = arrived
            if len(times) == count:
                future.set_result((min(times.values()), arrived))


if __name__ == "__main__":  # this benchmark alone; `make bench` runs it with the others
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=("postgresql", "sqlite"), action="append", help="one store (default: both)")
    parser.add_argument("--profile", type=Path, metavar="DIR", help="cProfile the three processes into DIR")
    arguments = parser.parse_args()
    if arguments.profile:
        arguments.profile.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as logs:
        for line in busy_block(Path(logs), tuple(arguments.store or ("postgresql", "sqlite")), arguments.profile):
            print(line)
