"""Run a call many times at a given concurrency; report throughput and latency."""

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable


async def measure(call: Callable[[int], Awaitable], concurrency: int, total: int, warmup: int = 100) -> dict:
    """`call(i)` `total` times, `concurrency` at a time, after `warmup` unmeasured calls.

    Result keys: concurrency, total, requests_per_s, p50_ms, p99_ms.
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
    percentiles = statistics.quantiles(latencies, n=100, method="inclusive")
    return {
        "concurrency": concurrency,
        "total": total,
        "requests_per_s": total / elapsed,
        "p50_ms": percentiles[49] * 1000,
        "p99_ms": percentiles[98] * 1000,
    }


def line(label: str, result: dict) -> str:
    return (
        f"{label:<34} c={result['concurrency']:>2}  {result['requests_per_s']:8.0f} req/s"
        f"  p50 {result['p50_ms']:7.2f} ms  p99 {result['p99_ms']:7.2f} ms  (n={result['total']})"
    )
