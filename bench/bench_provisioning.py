"""Provisioning: how long a delivery takes on the local test hosts, step by step, and from `paid` to `ready`.

`delivery_steps` drives provisioning's SSH host agent against one test host
in-process (connect, user, preparation, readiness check; then the reclaim),
with no broker in the way. `paid_to_ready` reads the timelines of orders the
stack delivered: from the order's `paid` entry to its `ready` entry, every
hop included (orders' event, provisioning's delivery, provisioning's event).
Both run on the GPU double: the readiness check's matrix products are
computed on the CPU in plain Python, so the readiness step is the double's,
not a real GPU's.
"""

import tempfile
import time
import uuid
from datetime import datetime
from pathlib import Path

import httpx

from bench.measure import percentiles
from infra.testhosts.hosts import TestHost, admin_key, can_run_hosts, netns_allowed
from infra.testhosts.local import TEST_ACCOUNT_KEY
from kernodeck_provisioning.domain import Node, NodeState
from kernodeck_provisioning.hosts import SshHosts
from kernodeck_provisioning.usecases import DeliveryJob

STEPS = ("connect", "user", "preparation", "readiness")


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
                "bench", host.host, host.port, host.host_key, "h100", "cuda", 8, NodeState.AVAILABLE, datetime.now()
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


def report(steps: dict, ready: dict) -> list[str]:
    lines = []
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
