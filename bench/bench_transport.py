"""What each of the transport's departures from the libraries' public API buys, against that API in the same run.

Each pair is measured in alternating rounds, so that the machine's load weighs on both alike, and compared by the
median of the rounds' ratios. The run exits with status 1 when a departure no longer buys its minimum: then it
goes, and the code uses the public API again.

The figures compared are CPU seconds, what the departures save; latencies on a loaded machine vary more.

- events published: a busy block's 400 outbox events on the kit's publishing connection, which declines
  connection.blocked notices, against kombu's own connection (the publishing process's CPU);
- rpc replies: echo calls at concurrency 1 to the kit's `rpc` entrypoint against nameko's (the services'
  CPU a call, and the p50 beside it), called by the gateway's client;
- batches handed over: 2,000 waiting events taken by a batching handler, from the consumer's green thread
  against nameko's green thread per event (the service's CPU).

    python bench/bench_transport.py [--rounds N]
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from bench.measure import measure
from infra.local.isolation import temporary_vhost
from kernodeck_gateway.rpc import RpcClient

SERVICES = Path(__file__).with_name("transport_services.py")
EVENTS = 400  # a busy block's events from one service
BATCH_EVENTS = 2000
CALLS_PER_ROUND = 500
# The least each departure must buy (baseline / kit's, median of the rounds): well under what each bought when
# it was kept, well over the rounds' noise on a loaded machine.
MINIMUM = {
    "events published": 1.10,
    "rpc replies": 1.10,
    "batches handed over": 1.10,
}


def services(command: str, uri: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(SERVICES), command, uri, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def eventlet_rounds(command: str, uri: str, rounds: int, count: int) -> dict:
    process = services(command, uri, str(rounds), str(count))
    out, _ = process.communicate()
    if process.returncode:
        raise RuntimeError(f"transport_services.py {command} failed")
    return json.loads(out.splitlines()[-1])


async def rpc_rounds(uri: str, rounds: int) -> dict[str, dict[str, list[float]]]:
    """Per variant, each round of CALLS_PER_ROUND echo calls at concurrency 1: its p50 seconds and the services'
    CPU seconds per call (the process's, asked of it before and after the round)."""
    process = services("serve", uri)
    names = json.loads(await asyncio.to_thread(process.stdout.readline))["ready"]
    client = RpcClient(uri, name="bench", timeout=30)
    await client.connect()
    try:
        figures = {variant: {"p50_s": [], "cpu_s": []} for variant in names}
        for n in range(rounds):
            for variant, service in alternating(names, n):
                await measure(lambda i, s=service: client.call(s, "echo", i), 1, 30, warmup=0)
                cpu = await client.call("bench_meter", "cpu")
                result = await measure(lambda i, s=service: client.call(s, "echo", i), 1, CALLS_PER_ROUND, warmup=0)
                cpu = await client.call("bench_meter", "cpu") - cpu
                figures[variant]["p50_s"].append(result["p50_ms"] / 1000)
                figures[variant]["cpu_s"].append(cpu / CALLS_PER_ROUND)
        return figures
    finally:
        await client.close()
        process.stdin.close()
        process.wait()


def alternating(variants: dict, n: int) -> list:
    items = list(variants.items())
    return items if n % 2 == 0 else items[::-1]


def compare(name: str, kit: dict, baseline: dict, unit: str) -> tuple[str, bool]:
    """The verdict line of one departure: the medians of its figures and of the rounds' ratios of CPU seconds,
    and whether it pays."""
    ratio = statistics.median(b / k for k, b in zip(kit["cpu_s"], baseline["cpu_s"], strict=True))
    pays = ratio >= MINIMUM[name]
    figures = [
        f"CPU {statistics.median(kit['cpu_s']) * 1e3:.3f} / {statistics.median(baseline['cpu_s']) * 1e3:.3f} {unit}"
    ]
    if "p50_s" in kit:
        figures.append(
            f"p50 {statistics.median(kit['p50_s']) * 1e3:.3f} / {statistics.median(baseline['p50_s']) * 1e3:.3f} ms"
        )
    return (
        f"{name:<24} kit / public API: {', '.join(figures)}; {ratio:.2f}x the CPU "
        f"(needs >= {MINIMUM[name]:.2f}x): {'pays' if pays else 'NOT paying: use the public API'}",
        pays,
    )


def machine_line() -> str:
    """The machine's speed and load in this run: its CPUs, load average and a fixed pure-Python loop's time."""
    started = time.perf_counter()
    sum(i * i for i in range(1_000_000))
    loop_ms = (time.perf_counter() - started) * 1000
    return f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}, reference loop {loop_ms:.0f} ms"


def transport_bench(rounds: int) -> tuple[list[str], bool]:
    lines = [machine_line()]
    with temporary_vhost("kd_bench_transport") as uri:
        published = eventlet_rounds("publish", uri, rounds, EVENTS)
        batches = eventlet_rounds("batches", uri, rounds, BATCH_EVENTS)
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            calls = runner.run(rpc_rounds(uri, rounds))
    verdicts = [
        compare(
            "events published", {"cpu_s": published["kit"]}, {"cpu_s": published["kombu"]}, f"ms a batch of {EVENTS}"
        ),
        compare("rpc replies", calls["kit"], calls["nameko"], "ms a call"),
        compare("batches handed over", batches["kit"], batches["nameko"], f"ms for {BATCH_EVENTS} events"),
    ]
    lines += [line for line, _ in verdicts]
    lines.append(machine_line())
    return lines, all(pays for _, pays in verdicts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    lines, pays = transport_bench(parser.parse_args().rounds)
    for each in lines:
        print(each)
    sys.exit(0 if pays else 1)


if __name__ == "__main__":
    main()
