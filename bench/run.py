"""`make bench`: the gateway's quotes, orders and payment intents (at concurrency 1 and 32)
against bare HTTP and AMQP baselines; 32 customers at once, each quoting, ordering and asking for payment
instructions, on SQLite and PostgreSQL (bench_customers.py); confirmed chain event → order paid, on real nodes
and doubles, each network's watcher woken by its node, the block bringing the last confirmation
→ order paid; a busy block, one transaction paying 200 orders, on PostgreSQL and SQLite; the Solana
watcher against ten minutes of mainnet-size slots (bench_solana_mainnet.py), its lag and pace;
provisioning: paid → ready on the local GPU test hosts, split into its steps; notify's
event → Telegram message under Telegram's limits; a burst of 50 registrations from 10 clients (how
fast, how long each waits, in which order) and a logged-in customer's requests alone and during it; a
login flood from 200 addresses while a customer logs in every second; the web frontend in headless
Chromium: first load and block → the order page showing paid; last, what each of the kit transport's
departures from the libraries' public API buys (bench_transport.py, failing the run when one stops
paying). Watcher matching with a million watched
addresses is bench/bench_watcher_match.py.
"""

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_block_to_paid import block_to_paid
from bench.bench_busy_block import busy_block
from bench.bench_customers import customers_bench
from bench.bench_gateway import CAPACITY as GATEWAY_CAPACITY
from bench.bench_gateway import STACK_ENV as GATEWAY_STACK_ENV
from bench.bench_gateway import bare_http_server, gateway_bench
from bench.bench_gateway import report as gateway_report
from bench.bench_login_flood import STACK_ENV as FLOOD_STACK_ENV
from bench.bench_login_flood import login_flood
from bench.bench_login_flood import report as flood_report
from bench.bench_notify import notify_bench
from bench.bench_payments import confirmed_to_paid
from bench.bench_provisioning import delivery_steps, paid_to_ready
from bench.bench_provisioning import report as provisioning_report
from bench.bench_registrations import STACK_ENV as REGISTRATION_STACK_ENV
from bench.bench_registrations import registration_burst
from bench.bench_registrations import report as registrations_report
from bench.bench_transport import transport_bench
from bench.bench_web import web_bench
from bench.measure import bearer_for_new_customer
from infra.local.isolation import running_stack
from infra.local.stack import BIN, Stack
from tests.e2e.conftest import watchers_reporting


async def run_all(stack: Stack, bare_url: str) -> dict:
    auth = await bearer_for_new_customer(stack.url)
    results = {"gateway": await gateway_bench(stack, bare_url, auth)}
    results["confirmed_to_paid"] = await confirmed_to_paid(stack.url, auth, stack.env["AMQP_URI"], samples=200)
    results["paid_to_ready"] = await asyncio.to_thread(paid_to_ready, stack.url, auth)
    results["registrations"] = await registration_burst(stack.url, auth)
    results["login_flood"] = await login_flood(stack.url)  # last: it leaves failed logins behind
    return results


def report(results: dict) -> None:
    for each in gateway_report(results["gateway"]):
        print(each)
    paid = results["confirmed_to_paid"]
    print(
        f"confirmed chain event -> order paid event: p50 {paid['p50_ms']:.1f} ms  p99 {paid['p99_ms']:.1f} ms over {paid['samples']} orders (target p99 < 200 ms): {'met' if paid['p99_ms'] < 200 else 'NOT met'}"
    )


def main() -> None:
    bare, bare_url = bare_http_server()
    try:
        with (
            tempfile.TemporaryDirectory() as logs,
            running_stack(
                Path(logs),
                "kd_bench",
                {**REGISTRATION_STACK_ENV, **FLOOD_STACK_ENV, **GATEWAY_STACK_ENV},
                **GATEWAY_CAPACITY,
                production_hashing=True,
            ) as stack,
            watchers_reporting(stack.env["AMQP_URI"]),  # no chain node here: a network no watcher reports on is off
        ):
            results = asyncio.run(run_all(stack, bare_url))
            report(results)
        print()
        for line in registrations_report(results["registrations"]):
            print(line)
        print()
        for line in flood_report(results["login_flood"]):
            print(line)
        print()
        for line in provisioning_report(delivery_steps(), results["paid_to_ready"]):
            print(line)
        with tempfile.TemporaryDirectory() as logs:
            print()
            for line in block_to_paid(Path(logs)):
                print(line)
        with tempfile.TemporaryDirectory() as logs:
            print()
            for line in busy_block(Path(logs)):
                print(line)
        with tempfile.TemporaryDirectory() as logs:
            print()
            for line in customers_bench(Path(logs)):
                print(line, flush=True)
        print(flush=True)
        # In a process of its own: the watcher runs under eventlet, which this one's asyncio must not.
        subprocess.run([str(BIN / "python"), str(Path(__file__).with_name("bench_solana_mainnet.py"))], check=True)
        with tempfile.TemporaryDirectory() as logs:
            print()
            for line in notify_bench(Path(logs)):
                print(line)
        with tempfile.TemporaryDirectory() as logs:
            print()
            for line in web_bench(Path(logs)):
                print(line)
        print()
        transport, pays = transport_bench(rounds=8)
        for line in transport:
            print(line)
    finally:
        bare.terminate()
        bare.wait()
    if not pays:
        sys.exit("a departure of kernodeck_kit.transport no longer pays: see above")


if __name__ == "__main__":
    main()
