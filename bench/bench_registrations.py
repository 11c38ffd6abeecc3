"""20 registrations at once (argon2id, 64 MiB each) while a logged-in customer keeps calling: the
customer's requests alone, then during the burst. Registrations that find the hashing pool full
(503 with Retry-After) come back when told, as a client should, until all 20 are in."""

import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import bearer_for_new_customer, percentiles
from infra.local.isolation import running_stack

BURST = 20
ALONE = 200
CUSTOMER_PATH = "/api/v1/me"
# The stack hashes at production's niceness (10), not the test stacks' 0.
STACK_ENV = {"ACCOUNTS_PASSWORD_HASHING_NICENESS": "10"}


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


async def register_until_in(client: httpx.AsyncClient, n: int, refusals: list[int], timeouts: list[int]) -> None:
    """Register, coming back when a full hashing pool says (503 + Retry-After). A 503 without Retry-After
    is the gateway giving up on a slow answer: counted, and tried again (409 then means it had gone in)."""
    body = {"first_name": "B", "last_name": str(n), "email": f"burst-{uuid.uuid4().hex[:8]}@example.org"}
    body["password"] = "benchmark password 0123"
    while True:
        response = await client.post("/api/v1/accounts", json=body)
        if response.status_code == 201 or (response.status_code == 409 and timeouts.count(n)):
            return
        if response.status_code != 503:
            raise RuntimeError(f"registration: {response.status_code} {response.text}")
        if "retry-after" in response.headers:
            refusals.append(n)
            await asyncio.sleep(int(response.headers["retry-after"]))
        else:
            timeouts.append(n)


async def registration_burst(url: str, auth: dict) -> dict:
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        alone = await customer_calls(client, auth, lambda calls: calls >= ALONE + 20)
        alone = alone[20:]  # the first calls warm the connection up
        refusals: list[int] = []
        timeouts: list[int] = []
        started = time.perf_counter()
        burst = asyncio.gather(*(register_until_in(client, n, refusals, timeouts) for n in range(BURST)))
        during = await customer_calls(client, auth, lambda _calls: burst.done())
        await burst
        elapsed = time.perf_counter() - started
    return {
        "alone": percentiles(alone),
        "during": percentiles(during),
        "samples": (len(alone), len(during)),
        "burst_s": elapsed,
        "refusals": len(refusals),
        "timeouts": len(timeouts),
    }


def report(result: dict) -> list[str]:
    alone, during = result["alone"], result["during"]
    return [
        f"{BURST} parallel registrations: all in after {result['burst_s']:.1f} s,"
        f" {result['refusals']} answers 503 + Retry-After (hashing pool full) on the way,"
        f" {result['timeouts']} 503 without (the gateway's RPC timeout ran out)",
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
    with tempfile.TemporaryDirectory() as logs, running_stack(Path(logs), "kd_bench_reg", STACK_ENV) as stack:
        for line in report(asyncio.run(_alone_on_a_stack(stack.url))):
            print(line)


if __name__ == "__main__":
    main()
