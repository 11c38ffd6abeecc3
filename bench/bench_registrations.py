"""A burst of 50 registrations from 10 clients (argon2id, 64 MiB each) while a logged-in customer keeps
calling: the customer's requests alone, then during the burst; how fast the burst is registered, how
long each waited, and whether they were served in the order sent.

The burst is sent at once, its clients interleaved (client 1, 2, ... 10, 1, 2, ...), through the gateway
behind a trusted proxy (each client's address in X-Forwarded-For). A registration refused with 503 and
Retry-After comes back when told, as a client should, until it is in (the refusals are counted). The
machine's speed, one production argon2id hash here, is measured in the same run.

    python bench/bench_registrations.py      # on a stack of its own
"""

import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import bearer_for_new_customer, password_hash_s, percentiles
from infra.local.isolation import running_stack

BURST = 50
CLIENTS = 10
ALONE = 200
CUSTOMER_PATH = "/api/v1/me"
# Behind a trusted proxy (this process). Hashing at the test stacks' niceness (0), not production's 10: on a
# machine shared with unrelated work (the development machines), a hash at 10 yields to all of it and takes
# several times as long, which says more about the other work than about the queue.
STACK_ENV = {"GATEWAY_TRUSTED_PROXIES": "127.0.0.1/32"}


async def customer_calls(client: httpx.AsyncClient, auth: dict, until) -> list[float]:
    """Seconds each GET /api/v1/me took, one after another until `until(calls made)`."""
    latencies = []
    while not until(len(latencies)):
        started = time.perf_counter()
        response = await client.get(CUSTOMER_PATH, headers=auth)
        latencies.append(time.perf_counter() - started)
        if response.status_code != 200:
            raise RuntimeError(f"{CUSTOMER_PATH}: {response.status_code} {response.text}")
    return latencies


async def register_until_in(client: httpx.AsyncClient, n: int, refusals: list[int], timeouts: list[int]) -> float:
    """Register as client n % CLIENTS; the time it took to be in, coming back when a 503 says (with
    Retry-After). A 503 without Retry-After is the gateway giving up on a slow answer: counted, and tried
    again (409 then means it had gone in)."""
    body = {"first_name": "B", "last_name": str(n), "email": f"burst-{uuid.uuid4().hex[:8]}@example.org"}
    body["password"] = "benchmark password 0123"
    headers = {"X-Forwarded-For": f"198.51.100.{n % CLIENTS + 1}"}
    started = time.perf_counter()
    while True:
        response = await client.post("/api/v1/accounts", json=body, headers=headers)
        if response.status_code == 201 or (response.status_code == 409 and timeouts.count(n)):
            return time.perf_counter() - started
        if response.status_code != 503:
            raise RuntimeError(f"registration: {response.status_code} {response.text}")
        if "retry-after" in response.headers:
            refusals.append(n)
            await asyncio.sleep(int(response.headers["retry-after"]))
        else:
            timeouts.append(n)


def inversions(order: list[int]) -> int:
    """Pairs answered in the other order than sent (0: exactly in order)."""
    return sum(1 for i, a in enumerate(order) for b in order[i + 1 :] if a > b)


async def registration_burst(url: str, auth: dict) -> dict:
    hash_s = await asyncio.to_thread(password_hash_s)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=BURST)
    async with (
        httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client,
        httpx.AsyncClient(base_url=url, timeout=30) as customer,
    ):
        alone = await customer_calls(customer, auth, lambda calls: calls >= ALONE + 20)
        alone = alone[20:]  # the first calls warm the connection up
        refusals: list[int] = []
        timeouts: list[int] = []
        answered: list[int] = []

        async def one(n: int) -> float:
            took = await register_until_in(client, n, refusals, timeouts)
            answered.append(n)
            return took

        started = time.perf_counter()
        burst = asyncio.gather(*(one(n) for n in range(BURST)))
        during = await customer_calls(customer, auth, lambda _calls: burst.done())
        waits = await burst
        elapsed = time.perf_counter() - started
    return {
        "hash_s": hash_s,
        "alone": percentiles(alone),
        "during": percentiles(during),
        "samples": (len(alone), len(during)),
        "burst_s": elapsed,
        "waits": percentiles(waits),
        "refusals": len(refusals),
        "timeouts": len(timeouts),
        "inversions": inversions(answered),
        # The n-th sent, against the hashes of the n before it and its own.
        "slowest_against_queue": max(took / ((n + 1) * hash_s) for n, took in enumerate(waits)),
    }


def report(result: dict) -> list[str]:
    alone, during, waits = result["alone"], result["during"], result["waits"]
    return [
        f"machine: one production argon2id hash (64 MiB, t=3, p=4) takes {result['hash_s'] * 1000:.0f} ms here now",
        f"{BURST} registrations at once from {CLIENTS} clients: all in after {result['burst_s']:.1f} s,"
        f" {BURST / result['burst_s']:.1f} registrations a second;"
        f" {result['refusals']} answers 503 + Retry-After on the way,"
        f" {result['timeouts']} 503 without (the gateway's RPC timeout ran out)",
        f"each registration's time to 201: p50 {waits['p50_ms']:.0f} ms  p99 {waits['p99_ms']:.0f} ms;"
        f" the slowest {result['slowest_against_queue']:.2f}x the hashes of those sent before it and its own;"
        f" {result['inversions']} pairs answered in another order than sent (of {BURST * (BURST - 1) // 2})",
        f"GET {CUSTOMER_PATH} as a logged-in customer, alone:          p50 {alone['p50_ms']:6.2f} ms"
        f"  p99 {alone['p99_ms']:6.2f} ms  (n={result['samples'][0]})",
        f"GET {CUSTOMER_PATH} as a logged-in customer, during the burst: p50 {during['p50_ms']:6.2f} ms"
        f"  p99 {during['p99_ms']:6.2f} ms  (n={result['samples'][1]})",
        f"during / alone: p50 {during['p50_ms'] / alone['p50_ms']:.2f}x  p99 {during['p99_ms'] / alone['p99_ms']:.2f}x",
    ]


async def _alone_on_a_stack(url: str) -> dict:
    return await registration_burst(url, await bearer_for_new_customer(url))


def main() -> None:
    """This benchmark by itself, on a stack of its own (`make bench` runs it with the others)."""
    with (
        tempfile.TemporaryDirectory() as logs,
        running_stack(Path(logs), "kd_bench_reg", STACK_ENV, production_hashing=True) as stack,
    ):
        for line in report(asyncio.run(_alone_on_a_stack(stack.url))):
            print(line)


if __name__ == "__main__":
    main()
