"""The Solana watcher against mainnet-size blocks: does it keep up with 2.5 slots a second?

Run: .venv/bin/python bench/bench_solana_mainnet.py [--slots 1500] [--realtime]

The Solana double runs in its own process with its mainnet traffic
(infra/devnet/solana_double/traffic.py: every block 1,200 vote transactions
and 600 swaps besides its own, about 4 MB of JSON with
`transactionDetails: "accounts"`, 5.5 MB in full), on this machine, so its
serving competes with the watcher for the CPUs (a provider's does not, but
adds the network's round trip).

1. One slot's cost, fetched, parsed and matched against 10,000 watched
   addresses, over 24 slots each way: the baseline the issue describes (full
   JSON, one slot at a time, uncompressed), `accounts` one at a time
   uncompressed (the watcher before gzip and reading ahead), `accounts` with
   gzip, and the watcher now (SolanaClient: `accounts`, gzip, 8 slots read
   ahead). Each as wall-clock here, the watcher's CPU time (what it needs of
   its own core) and the double's (what a provider spends on its machines),
   with the bytes on the wire.
2. Ten minutes of slots (1,500). By default the double produces them first,
   all at once, with a payment to a watched address every 150 slots and
   one slot in 25 skipped (mainnet skips a few percent), and the watcher
   (Scanner on SQLite, the slots scanned from the first) catches up; the
   bench prints its processing rate against the chain's 2.5 slots a second,
   and the lag it would have had following the chain live: each slot
   available 0.4 s after the previous, and scanned, one after the other, at
   the pace measured (lag = slots the chain made by then minus the slot
   scanned): at the wall-clock pace here, and at the pace of the watcher's
   own CPU time alone (the node on other machines, its time hidden by the
   slots read ahead). With --realtime, the double makes a block every 400 ms for the
   slots' ten minutes of wall-clock, the watcher scans as they come, and
   the lag (the node's confirmed slot minus the watcher's) is sampled every
   second. Either way, every payment must be found. The lag limit is 150
   slots (WATCHER_SOLANA_LAG_BLOCKS): beyond it SOL would be withdrawn.
"""

from kernodeck_kit import green

green.patch()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import eventlet  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solders.keypair import Keypair  # noqa: E402
from sqlalchemy import text  # noqa: E402

from infra.devnet.solana_double.jsonrpc import call  # noqa: E402
from infra.devnet.solana_double.traffic import Traffic  # noqa: E402
from infra.devnet.solana_double.wallet import Wallet  # noqa: E402
from infra.local.stack import BIN, free_port  # noqa: E402
from kernodeck_kit import migrations  # noqa: E402
from kernodeck_kit.db import make_engine  # noqa: E402
from kernodeck_kit.outbox import Store  # noqa: E402
from kernodeck_watchers.chains.jsonrpc import JsonRpc  # noqa: E402
from kernodeck_watchers.chains.solana import SolanaClient, _transfers  # noqa: E402
from kernodeck_watchers.domain.progress import Progress  # noqa: E402
from kernodeck_watchers.domain.watched import WatchedAddresses  # noqa: E402
from kernodeck_watchers.scanner import Scanner  # noqa: E402
from kernodeck_watchers.store.unit import watcher_units  # noqa: E402

SLOT_S = 0.4
LAG_LIMIT = 150
WATCHED = 10_000
SAMPLE_SLOTS = 24
AHEAD = 8
PAY_EVERY = 150
SKIP_EVERY = 25
LAMPORTS = 10_000_000


class Double:
    """The Solana double with its mainnet traffic, in a process of its own (its CPU time read from /proc)."""

    def __init__(self, block_time_ms: int):
        port = free_port()
        command = [str(BIN / "python"), "-m", "infra.devnet.solana_double", "--mainnet-size", "--port", str(port)]
        self.process = subprocess.Popen([*command, "--block-time-ms", str(block_time_ms)], stdout=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                call(self.url, "getSlot")
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the Solana double did not start")

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


@dataclass
class Cost:
    """Per slot: wall-clock here, the watcher's CPU, the double's CPU (a provider's, on its own machines)."""

    wall_s: float
    watcher_cpu_s: float
    node_cpu_s: float

    def line(self, label: str) -> str:
        return (
            f"  {label:<38} {self.wall_s:6.3f} s wall  watcher CPU {self.watcher_cpu_s:.3f} s"
            f" ({self.watcher_cpu_s / SLOT_S:.2f} of a slot)  double CPU {self.node_cpu_s:.3f} s"
        )


def measured(double: Double, slots: int, run) -> Cost:
    wall, cpu, node = time.perf_counter(), time.process_time(), double.cpu_s()
    run()
    return Cost(
        (time.perf_counter() - wall) / slots,
        (time.process_time() - cpu) / slots,
        (double.cpu_s() - node) / slots,
    )


def watched_set(paid: list[str]) -> WatchedAddresses:
    watched = WatchedAddresses(default_required=1)
    for address in [str(Keypair().pubkey()) for _ in range(WATCHED)] + paid:
        watched.add(address, 1)
    return watched


def body_sizes(url: str, slot: int) -> dict[tuple[str, str], int]:
    sizes = {}
    for details in ("full", "accounts"):
        config = {"commitment": "confirmed", "transactionDetails": details, "maxSupportedTransactionVersion": 0}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "getBlock", "params": [slot, config]}).encode()
        for encoding in ("identity", "gzip"):
            headers = {"Content-Type": "application/json", "Accept-Encoding": encoding}
            with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=120) as response:
                sizes[details, encoding] = len(response.read())
    return sizes


WAYS = (
    ("full JSON, one at a time (baseline)", "full", False, 1),
    ("accounts, one at a time", "accounts", False, 1),
    ("accounts, gzip, one at a time", "accounts", True, 1),
    (f"accounts, gzip, {AHEAD} read ahead (now)", "accounts", True, AHEAD),
)


def read_slots(client: SolanaClient, slots: list[int], details: str, watched: WatchedAddresses) -> None:
    """Each slot fetched, parsed and matched (`_transfers`, the client's own) against the watched set."""
    config = {"encoding": "json", "transactionDetails": details, "rewards": False, "commitment": "confirmed"}
    config["maxSupportedTransactionVersion"] = 0
    for slot in slots:
        if details == "full":
            block = client.rpc.call("getBlock", slot, config)
            [t for item in block["transactions"] for t in _transfers(item, watched.addresses)]
        else:
            client.transfers_in_block(client.block(slot), watched.addresses)


def per_slot_costs(double: Double, slots: list[int], watched: WatchedAddresses) -> dict[str, Cost]:
    costs = {}
    for label, details, gzip, ahead in WAYS:
        client = SolanaClient(double.url, commitment="confirmed", timeout_s=120, fetch_ahead=ahead)
        client.rpc = JsonRpc(double.url, 120, gzip=gzip)
        client.tip()
        costs[label] = measured(double, len(slots), partial(read_slots, client, slots, details, watched))
    return costs


class Timed(Progress):
    """Progress that remembers when each slot was committed: wall-clock, and the watcher's CPU time."""

    def __init__(self):
        super().__init__(since=datetime.now(UTC))
        self.committed: list[tuple[float, float, int]] = []

    def scanned(self, height: int, now: datetime) -> None:
        self.committed.append((time.perf_counter(), time.process_time(), height))
        super().scanned(height, now)


def scanner(url: str, database: Path, watched: WatchedAddresses, start: int, progress: Progress) -> Scanner:
    """The watcher's scan as the service runs it (tip delay aside: the double answers from one process)."""
    database_url = f"sqlite:///{database}"
    migrations.upgrade("kernodeck_watchers", database_url)
    return Scanner(
        units=watcher_units(Store(make_engine(database_url), "chain", relay=None), "solana"),
        client=SolanaClient(url, "solana", "confirmed", timeout_s=60, fetch_ahead=AHEAD),
        watched=watched,
        progress=progress,
        history_blocks=500,
        start_height=start,
    )


def seen(watcher: Scanner) -> int:
    with watcher.units.store.engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM outbox WHERE event_type = 'transfer_seen'")).scalar_one()


def replayed_lag(committed: list[tuple[float, int]], first_slot: int) -> list[float]:
    """Each slot's lag, had the chain made one slot every 0.4 s from the first and the watcher scanned each as
    soon as it was there, taking for each the time (`committed`: when each slot was done) it took here."""
    lags, finished, previous = [], 0.0, committed[0][0]
    for at, height in committed[1:]:
        finished = max(finished, (height - first_slot) * SLOT_S) + (at - previous)
        previous = at
        lags.append(finished / SLOT_S - (height - first_slot))
    return lags


def ten_minutes(slots: int, realtime: bool) -> list[str]:
    double = Double(int(SLOT_S * 1000) if realtime else 0)
    try:
        payer = Keypair()
        call(double.url, "requestAirdrop", str(payer.pubkey()), 10**12)
        if realtime:
            time.sleep(4 * SLOT_S)
        else:
            call(double.url, "double_produceBlocks", 3)
        recipients = [Keypair().pubkey() for _ in range(slots // PAY_EVERY + 1)]
        watched = watched_set([str(r) for r in recipients])
        start = call(double.url, "getSlot", {"commitment": "confirmed"}) + 1
        progress = Timed()
        with tempfile.TemporaryDirectory() as scratch:
            watcher = scanner(double.url, Path(scratch) / "watcher.db", watched, start, progress)
            if realtime:
                return _realtime(double.url, watcher, progress, slots, payer, recipients)
            return _produced_first(double, watcher, progress, slots, payer, recipients, start)
    finally:
        double.stop()


def _produced_first(
    double: Double, watcher: Scanner, progress: Timed, slots: int, payer: Keypair, recipients: list, start: int
) -> list[str]:
    wallet, paid = Wallet(double.url), 0
    for produced in range(slots):
        if produced % PAY_EVERY == PAY_EVERY // 2:
            wallet.transfer(payer, recipients[paid], LAMPORTS)
            paid += 1
        if produced % SKIP_EVERY == SKIP_EVERY - 1:
            call(double.url, "double_skipSlots", 1)
        call(double.url, "double_produceBlocks", 1)
    call(double.url, "double_produceBlocks", 2)  # the last slots confirmed
    cost = measured(double, 1, watcher.run)
    committed = [(wall, cpu, height) for wall, cpu, height in progress.committed if height >= start]
    scanned = committed[-1][2] - start + 1
    wall_lags = replayed_lag([(wall, height) for wall, _, height in committed], start)
    cpu_lags = replayed_lag([(cpu, height) for _, cpu, height in committed], start)
    rate, cpu_rate = scanned / cost.wall_s, scanned / cost.watcher_cpu_s
    return [
        f"{scanned} slots ({scanned * SLOT_S / 60:.1f} minutes of the chain) produced first, then scanned from the"
        " first by the watcher"
        f" (Scanner, SQLite, {WATCHED:,} watched addresses, {AHEAD} read ahead):",
        f"  here: {cost.wall_s:.1f} s, {rate:.2f} slots/s against the chain's {1 / SLOT_S:.1f} ({rate * SLOT_S:.2f}x);"
        f" the double's CPU {cost.node_cpu_s / scanned:.3f} s a slot",
        f"  lag following the chain live at that pace (replayed): p50 {statistics.median(wall_lags):.1f} slots,"
        f" max {max(wall_lags):.1f} (limit {LAG_LIMIT})",
        f"  the watcher's own CPU: {cost.watcher_cpu_s / scanned:.3f} s a slot, {cpu_rate:.2f} slots/s"
        f" ({cpu_rate * SLOT_S:.2f}x the chain); lag at that pace, the node's time hidden by reading ahead:"
        f" p50 {statistics.median(cpu_lags):.1f}, max {max(cpu_lags):.1f}",
        f"  payments found: {seen(watcher)} of {paid}",
    ]


def _realtime(url: str, watcher: Scanner, progress: Timed, slots: int, payer: Keypair, recipients: list) -> list[str]:
    wallet, paid, lags = Wallet(url), 0, []
    deadline = time.perf_counter() + slots * SLOT_S

    def sample() -> None:
        while time.perf_counter() < deadline:
            eventlet.sleep(1.0)
            tip = call(url, "getSlot", {"commitment": "confirmed"})
            if progress.scanned_height is not None:
                lags.append(tip - progress.scanned_height)

    sampler = eventlet.spawn(sample)
    next_payment = time.perf_counter() + PAY_EVERY * SLOT_S / 2
    while time.perf_counter() < deadline:
        if time.perf_counter() >= next_payment:
            wallet.transfer(payer, recipients[paid], LAMPORTS)
            paid += 1
            next_payment += PAY_EVERY * SLOT_S
        watcher.run()
        eventlet.sleep(0.05)  # the watcher's next pass, woken by the node's slot notification
    sampler.wait()
    made = call(url, "getSlot", {"commitment": "confirmed"}) - progress.committed[0][2]
    eventlet.sleep(4 * SLOT_S)
    watcher.run()
    return [
        f"{slots * SLOT_S / 60:.1f} minutes, a block every {SLOT_S} s in real time ({made} slots made, the double"
        f" on this machine): lag sampled every second p50 {statistics.median(lags):.0f} slots, max {max(lags)}"
        f" (limit {LAG_LIMIT})",
        f"  payments found: {seen(watcher)} of {paid}",
    ]


def solana_mainnet(slots: int = 1500, realtime: bool = False) -> list[str]:
    double = Double(0)
    try:
        call(double.url, "double_produceBlocks", SAMPLE_SLOTS + 2)
        sample = call(double.url, "getBlocks", 1, {"commitment": "confirmed"})[-SAMPLE_SLOTS:]
        sizes = body_sizes(double.url, sample[-1])
        costs = per_slot_costs(double, sample, watched_set([]))
    finally:
        double.stop()
    baseline, now = costs[WAYS[0][0]], costs[WAYS[-1][0]]
    lines = [
        f"Solana at mainnet size: {Traffic.votes:,} votes + {Traffic.swaps} swaps a block, the double on this machine"
        f" (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)",
        f"  block JSON: full {sizes['full', 'identity'] / 1e6:.2f} MB ({sizes['full', 'gzip'] / 1e6:.2f} MB gzip),"
        f" accounts {sizes['accounts', 'identity'] / 1e6:.2f} MB ({sizes['accounts', 'gzip'] / 1e6:.2f} MB gzip);"
        f" at 100 Mbit/s: {sizes['full', 'identity'] * 8 / 1e8:.2f} s vs {sizes['accounts', 'gzip'] * 8 / 1e8:.2f} s",
        f"  per slot over {SAMPLE_SLOTS} slots, fetched, parsed and matched against {WATCHED:,} addresses:",
    ]
    lines += [cost.line(label) for label, cost in costs.items()]
    lines.append(
        f"  baseline / now: wall {baseline.wall_s / now.wall_s:.2f}x, watcher CPU"
        f" {baseline.watcher_cpu_s / now.watcher_cpu_s:.2f}x, bytes"
        f" {sizes['full', 'identity'] / sizes['accounts', 'gzip']:.1f}x"
    )
    return lines + ten_minutes(slots, realtime)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=1500, help="ten minutes of slots by default")
    parser.add_argument("--realtime", action="store_true", help="a block every 400 ms, the lag sampled live")
    args = parser.parse_args()
    for line in solana_mainnet(args.slots, args.realtime):
        print(line)
