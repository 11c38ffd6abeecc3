"""Provisioning: how long a delivery takes on the local test hosts, step by step, and from `paid` to `ready`.

`delivery_steps` drives provisioning's SSH host agent against one test host
in-process (connect, user, preparation, readiness check, the key; then the
reclaim), with no broker in the way, on a node checked as keeping rentals
apart (the readiness check opens every GPU device file). `paid_to_ready` reads the timelines of orders the
stack delivered: from the order's `paid` entry to its `ready` entry, every
hop included (orders' event, provisioning's delivery, provisioning's event).
Both run on the GPU double: the readiness check's matrix products are
computed on the CPU in plain Python, so the readiness step is the double's,
not a real GPU's. `machine_speed` times a fixed CPU-bound loop in the same
run, so that figures from two runs on this shared machine can be compared.

Alone (a stack of its own, 40 orders paid through the chain event a watcher
sends, then the in-process delivery steps):

    .venv/bin/python bench/bench_provisioning.py
"""

import asyncio
import os
import sys
import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_payments import confirmed_to_paid
from bench.measure import bearer_for_new_customer, percentiles
from infra.local.isolation import running_stack
from infra.testhosts.hosts import TestHost, admin_key, can_run_hosts, netns_allowed
from infra.testhosts.local import TEST_ACCOUNT_KEY
from kernodeck_provisioning.domain import DeliveryJob, Isolation, Node, NodeState
from kernodeck_provisioning.hosts import SshHosts
from tests.e2e.conftest import watchers_reporting

STEPS = ("connect", "user", "preparation", "readiness", "access")
REFERENCE_LOOP = 2_000_000  # additions of the machine-speed loop


def machine_speed(rounds: int = 5) -> dict:
    """The best time of a fixed pure-Python loop (ms; lower is faster) and the load average, to set beside
    figures taken on this shared machine."""
    best = min(_reference_loop() for _ in range(rounds))
    return {"reference_ms": best * 1000, "load_1m": os.getloadavg()[0], "cpus": os.cpu_count()}


def _reference_loop() -> float:
    started = time.perf_counter()
    total = 0
    for i in range(REFERENCE_LOOP):
        total += i
    return time.perf_counter() - started


def delivery_steps(samples: int = 20) -> dict:
    """Per step p50/p99 (ms) of `samples` deliveries (pytorch preparation, 2 GPUs) and their reclaims."""
    if reason := can_run_hosts():
        return {"skipped": reason}
    with tempfile.TemporaryDirectory() as folder:
        private, public = admin_key(Path(folder))
        host = TestHost("bench", Path(folder) / "host", 8, "cuda", "ok", netns_allowed())
        host.prepare(public)
        host.start()
        try:
            node = Node(
                "bench",
                host.host,
                host.port,
                host.host_key,
                "h100",
                "cuda",
                8,
                NodeState.AVAILABLE,
                datetime.now(),
                isolation=Isolation.KERNEL,
            )
            agent = SshHosts(str(private), accept_gpu_double=True)
            times = {step: [] for step in (*STEPS, "total", "reclaim")}
            for n in range(samples):
                job = DeliveryJob(
                    f"bench{n}", node, (0, 1), f"kdbench{n}{uuid.uuid4().hex[:4]}", TEST_ACCOUNT_KEY, "pytorch"
                )
                started = time.perf_counter()
                delivered = agent.deliver(job)
                times["total"].append(time.perf_counter() - started)
                for step in STEPS:
                    times[step].append(getattr(delivered.times, step))
                started = time.perf_counter()
                agent.reclaim(node, job.unix_user)
                times["reclaim"].append(time.perf_counter() - started)
        finally:
            host.stop()
    return {step: percentiles(values) for step, values in times.items()}


def paid_to_ready(url: str, auth: dict, timeout_s: float = 120) -> dict:
    """Milliseconds from `paid` to `ready` in the timelines of the customer's paid orders."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client(base_url=url, headers=auth, timeout=30) as client:
        while True:
            orders = [
                o
                for o in client.get("/api/v1/orders?limit=200").json()["items"]
                if o["status"] not in ("awaiting_payment", "cancelled")
            ]
            if all(o["status"] in ("ready", "failed") for o in orders) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    spans, failed = [], 0
    for order in orders:
        at = {entry["kind"]: datetime.fromisoformat(entry["at"]) for entry in order["timeline"]}
        if "ready" in at:
            spans.append((at["ready"] - at["paid"]).total_seconds())
        else:
            failed += 1
    return {"samples": len(spans), "not_ready": failed, **(percentiles(spans) if len(spans) > 1 else {})}


def report(steps: dict, ready: dict, speed: dict | None = None) -> list[str]:
    lines = []
    if speed:
        lines.append(
            f"machine: reference loop {speed['reference_ms']:.1f} ms (best of 5; lower is faster),"
            f" load average {speed['load_1m']:.2f} on {speed['cpus']} CPUs"
        )
    if "skipped" in steps:
        lines.append(f"delivery steps: skipped ({steps['skipped']})")
    else:
        lines.append("delivery on a local test host (GPU double), pytorch preparation, 2 GPUs:")
        for step, result in steps.items():
            lines.append(f"  {step:<12} p50 {result['p50_ms']:8.1f} ms  p99 {result['p99_ms']:8.1f} ms")
    if ready.get("samples", 0) > 1:
        lines.append(
            f"paid -> ready (orders' timeline, every hop): p50 {ready['p50_ms']:.0f} ms  p99 {ready['p99_ms']:.0f} ms"
            f" over {ready['samples']} orders ({ready['not_ready']} not ready)"
        )
    else:
        lines.append(f"paid -> ready: too few delivered orders to measure ({ready})")
    return lines


def main(orders: int = 40) -> None:
    """paid -> ready over `orders` orders on a stack of its own, then the delivery steps, the machine's speed
    taken before each."""

    async def pay_and_wait(stack) -> dict:
        auth = await bearer_for_new_customer(stack.url)
        await confirmed_to_paid(stack.url, auth, stack.env["AMQP_URI"], samples=orders)
        return await asyncio.to_thread(paid_to_ready, stack.url, auth)

    speed = machine_speed()
    with (
        tempfile.TemporaryDirectory() as logs,
        running_stack(Path(logs), "kd_bench_prov") as stack,
        watchers_reporting(stack.env["AMQP_URI"]),
    ):
        ready = asyncio.run(pay_and_wait(stack))
    steps_speed = machine_speed()
    for line in report(delivery_steps(), ready, speed):
        print(line)
    print(
        f"machine before the delivery steps: reference loop {steps_speed['reference_ms']:.1f} ms,"
        f" load average {steps_speed['load_1m']:.2f}"
    )


if __name__ == "__main__":
    main()
