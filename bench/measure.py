"""Run a call many times at a given concurrency and report throughput and latency; a customer to call as."""

import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable

import httpx

from infra.testhosts.local import TEST_ACCOUNT_KEY


async def measure(call: Callable[[int], Awaitable], concurrency: int, total: int, warmup: int = 100) -> dict:
    """`call(i)` `total` times, `concurrency` at a time, after `warmup` unmeasured calls.

    Result keys: concurrency, total, requests_per_s, p50_ms, p99_ms, latencies_s (each call's seconds).
    """
    latencies: list[float] = []

    async def worker(first: int, calls: int) -> None:
        for i in range(first, first + calls):
            started = time.perf_counter()
            await call(i)
            latencies.append(time.perf_counter() - started)

    await worker(0, warmup)
    latencies.clear()
    share, extra = divmod(total, concurrency)
    started = time.perf_counter()
    await asyncio.gather(*(worker(n * (share + 1), share + (n < extra)) for n in range(concurrency)))
    elapsed = time.perf_counter() - started
    return {
        "concurrency": concurrency,
        "total": total,
        "requests_per_s": total / elapsed,
        "latencies_s": latencies,
        **percentiles(latencies),
    }


def percentiles(samples: list[float]) -> dict:
    """p50_ms, p90_ms and p99_ms of `samples` (seconds)."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {"p50_ms": cuts[49] * 1000, "p90_ms": cuts[89] * 1000, "p99_ms": cuts[98] * 1000}


def line(label: str, result: dict) -> str:
    return (
        f"{label:<34} c={result['concurrency']:>2}  {result['requests_per_s']:8.0f} req/s"
        f"  p50 {result['p50_ms']:7.2f} ms  p99 {result['p99_ms']:7.2f} ms  (n={result['total']})"
    )


async def bearer_for_new_customer(url: str) -> dict:
    """The Authorization header of a customer account opened for the run."""
    email, password = f"bench-{uuid.uuid4().hex[:8]}@example.org", "benchmark password 0123"
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        registered = await client.post(
            "/api/v1/accounts", json={"first_name": "B", "last_name": "M", "email": email, "password": password}
        )
        session = await client.post("/api/v1/sessions", json={"email": email, "password": password})
        if session.status_code != 201:
            raise RuntimeError(f"no customer: {registered.status_code} {registered.text}; {session.text}")
        token = session.json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        # The key installed on the nodes of the orders it pays, so that they are delivered.
        await client.put("/api/v1/me/ssh-key", json={"ssh_public_key": TEST_ACCOUNT_KEY}, headers=auth)
    return auth


def password_hash_s(samples: int = 5) -> float:
    """This machine's speed where the password benchmarks depend on it: the median seconds of one argon2id
    hash with accounts' production parameters (RFC 9106 low-memory: 64 MiB, 3 passes, 4 lanes), here and now."""
    from argon2 import PasswordHasher, Type
    from argon2.profiles import RFC_9106_LOW_MEMORY as PROFILE

    hasher = PasswordHasher(
        time_cost=PROFILE.time_cost, memory_cost=PROFILE.memory_cost, parallelism=PROFILE.parallelism, type=Type.ID
    )
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        hasher.hash("benchmark password 0123")
        times.append(time.perf_counter() - started)
    return statistics.median(times)
