"""The Solana watcher against mainnet-size blocks: does it keep up with 2.5 slots a second?

Run: .venv/bin/python bench/bench_solana_mainnet.py [--slots 1500] [--realtime]

The Solana double runs in its own process with its mainnet traffic
(infra/devnet/solana_double/traffic.py: every block 1,200 vote transactions
and 600 swaps besides its own, about 4 MB of JSON with
`transactionDetails: "accounts"`, 5.5 MB in full), on this machine, so its
serving competes with the watcher for the CPUs (a provider's does not, but
adds the network's round trip).

1. One slot's cost, fetched, parsed and matched against 10,000 watched
   addresses, over 40 slots each way: the baseline the issue describes (full
   JSON, one slot at a time, uncompressed), `accounts` one at a time
   uncompressed (the watcher before gzip and reading ahead), and the watcher
   now (SolanaClient: `accounts`, gzip, 8 slots read ahead).
2. Ten minutes of slots (1,500). By default the double produces them first,
   all at once, with a payment to a watched address every 150 slots and
   one slot in 25 skipped (mainnet skips a few percent), and the watcher
   (Scanner on SQLite, the slots scanned from the first) catches up; the
   bench prints its processing rate against the chain's 2.5 slots a second,
   and the lag it would have had following the chain live: each slot
   available 0.4 s after the previous, and scanned, one after the other, at
   the pace measured (lag = slots the chain made by then minus the slot
   scanned). With --realtime, the double makes a block every 400 ms for the
   slots' ten minutes of wall-clock, the watcher scans as they come, and
   the lag (the node's confirmed slot minus the watcher's) is sampled every
   second. Either way, every payment must be found. The lag limit is 150
   slots (WATCHER_SOLANA_LAG_BLOCKS): beyond it SOL would be withdrawn.
"""

from kernodeck_kit import green

green.patch()

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from pathlib import Path  # noqa: E402

import eventlet  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solders.keypair import Keypair  # noqa: E402
from sqlalchemy import text  # noqa: E402

from infra.devnet.solana_double.jsonrpc import call  # noqa: E402
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

SLOT_S = 0.4
LAG_LIMIT = 150
WATCHED = 10_000
SAMPLE_SLOTS = 40
AHEAD = 8
PAY_EVERY = 150
SKIP_EVERY = 25
LAMPORTS = 10_000_000


def start_double(block_time_ms: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [str(BIN / "python"), "-m", "infra.devnet.solana_double", "--mainnet-size", "--port", str(port)]
    process = subprocess.Popen([*command, "--block-time-ms", str(block_time_ms)], stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            call(url, "getSlot")
            return process, url
        except OSError:
            time.sleep(0.1)
    process.terminate()
    raise RuntimeError("the Solana double did not start")


def watched_set(paid: list[str]) -> WatchedAddresses:
    watched = WatchedAddresses(default_required=1)
    for address in [str(Keypair().pubkey()) for _ in range(WATCHED)] + paid:
        watched.add(address, 1)
    return watched


def body_sizes(url: str, slot: int) -> dict[str, int]:
    sizes = {}
    for details in ("full", "accounts"):
        config = {"commitment": "confirmed", "transactionDetails": details, "maxSupportedTransactionVersion": 0}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "getBlock", "params": [slot, config]}).encode()
        for encoding in ("identity", "gzip"):
            headers = {"Content-Type": "application/json", "Accept-Encoding": encoding}
            with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=60) as response:
                sizes[details, encoding] = len(response.read())
    return sizes


def per_slot_costs(url: str, slots: list[int], watched: WatchedAddresses) -> dict[str, float]:
    """Seconds per slot, fetched, parsed and matched, each way."""
    costs = {}
    for label, details, gzip in (
        ("full JSON, one at a time", "full", False),
        ("accounts, one at a time", "accounts", False),
    ):
        rpc = JsonRpc(url, 60, gzip=gzip)
        config = {"encoding": "json", "transactionDetails": details, "rewards": False, "commitment": "confirmed"}
        config["maxSupportedTransactionVersion"] = 0
        started = time.perf_counter()
        for slot in slots:
            block = rpc.call("getBlock", slot, config)
            [t for item in block["transactions"] for t in _transfers(item, watched.addresses)]
        costs[label] = (time.perf_counter() - started) / len(slots)
    client = SolanaClient(url, commitment="confirmed", timeout_s=60, fetch_ahead=AHEAD)
    client.tip()
    started = time.perf_counter()
    for slot in slots:
        client.transfers_in_block(client.block(slot), watched.addresses)
    costs[f"accounts, gzip, {AHEAD} read ahead (now)"] = (time.perf_counter() - started) / len(slots)
    return costs


class Timed(Progress):
    """Progress that remembers when each slot was committed."""

    def __init__(self):
        super().__init__(since=datetime.now(UTC))
        self.committed: list[tuple[float, int]] = []

    def scanned(self, height: int, now: datetime) -> None:
        self.committed.append((time.perf_counter(), height))
        super().scanned(height, now)


def scanner(url: str, database: Path, watched: WatchedAddresses, start: int, progress: Progress) -> Scanner:
    """The watcher's scan as the service runs it (tip delay aside: the double answers from one process)."""
    database_url = f"sqlite:///{database}"
    migrations.upgrade("kernodeck_watchers", database_url)
    return Scanner(
        store=Store(make_engine(database_url), "chain", relay=None),
        client=SolanaClient(url, "solana", "confirmed", timeout_s=60, fetch_ahead=AHEAD),
        watched=watched,
        progress=progress,
        history_blocks=500,
        start_height=start,
    )


def seen(watcher: Scanner) -> int:
    with watcher.store.engine.connect() as conn:
        return conn.execute(text("SELECT count(*) FROM outbox WHERE event_type = 'transfer_seen'")).scalar_one()


def replayed_lag(committed: list[tuple[float, int]], first_slot: int) -> list[float]:
    """Each slot's lag, had the chain made one slot every 0.4 s from the first and the watcher scanned each as
    soon as it was there, taking the time it took here."""
    lags, finished, previous = [], 0.0, committed[0][0]
    for at, height in committed[1:]:
        finished = max(finished, (height - first_slot) * SLOT_S) + (at - previous)
        previous = at
        lags.append(finished / SLOT_S - (height - first_slot))
    return lags


def ten_minutes(slots: int, realtime: bool) -> list[str]:
    process, url = start_double(int(SLOT_S * 1000) if realtime else 0)
    try:
        payer = Keypair()
        call(url, "requestAirdrop", str(payer.pubkey()), 10**12)
        if realtime:
            time.sleep(4 * SLOT_S)
        else:
            call(url, "double_produceBlocks", 3)
        recipients = [Keypair().pubkey() for _ in range(slots // PAY_EVERY + 1)]
        watched = watched_set([str(r) for r in recipients])
        start = call(url, "getSlot", {"commitment": "confirmed"}) + 1
        progress = Timed()
        with tempfile.TemporaryDirectory() as scratch:
            watcher = scanner(url, Path(scratch) / "watcher.db", watched, start, progress)
            if realtime:
                return _realtime(url, watcher, progress, slots, payer, recipients)
            return _produced_first(url, watcher, progress, slots, payer, recipients, start)
    finally:
        process.terminate()
        process.wait()


def _produced_first(
    url: str, watcher: Scanner, progress: Timed, slots: int, payer: Keypair, recipients: list, start: int
) -> list[str]:
    wallet, paid = Wallet(url), 0
    for produced in range(slots):
        if produced % PAY_EVERY == PAY_EVERY // 2:
            wallet.transfer(payer, recipients[paid], LAMPORTS)
            paid += 1
        if produced % SKIP_EVERY == SKIP_EVERY - 1:
            call(url, "double_skipSlots", 1)
        call(url, "double_produceBlocks", 1)
    call(url, "double_produceBlocks", 2)  # the last slots confirmed
    started = time.perf_counter()
    watcher.run()
    took = time.perf_counter() - started
    committed = [(at, height) for at, height in progress.committed if height >= start]
    scanned = committed[-1][1] - start + 1
    rate = scanned / took
    lags = replayed_lag(committed, start)
    return [
        f"{scanned} slots produced first, then scanned in {took:.1f} s: {rate:.2f} slots/s against the chain's "
        f"{1 / SLOT_S:.1f} ({rate * SLOT_S:.2f}x)",
        f"lag following the chain live, replayed at that pace: p50 {statistics.median(lags):.1f} slots, "
        f"max {max(lags):.1f} (limit {LAG_LIMIT})",
        f"payments found: {seen(watcher)} of {paid}",
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
    eventlet.sleep(4 * SLOT_S)
    watcher.run()
    return [
        f"{slots} slots, a block every {SLOT_S} s in real time: lag sampled every second p50 "
        f"{statistics.median(lags):.0f} slots, max {max(lags)} (limit {LAG_LIMIT})",
        f"payments found: {seen(watcher)} of {paid}",
    ]


def solana_mainnet(slots: int = 1500, realtime: bool = False) -> list[str]:
    process, url = start_double(0)
    try:
        call(url, "double_produceBlocks", SAMPLE_SLOTS + 2)
        sample = [s for s in call(url, "getBlocks", 1, {"commitment": "confirmed"})][-SAMPLE_SLOTS:]
        sizes = body_sizes(url, sample[-1])
        costs = per_slot_costs(url, sample, watched_set([]))
    finally:
        process.terminate()
        process.wait()
    baseline, now = costs["full JSON, one at a time"], costs[f"accounts, gzip, {AHEAD} read ahead (now)"]
    lines = [
        "Solana at mainnet size (1,200 votes + 600 swaps a block; the double on this machine):",
        f"block JSON: full {sizes['full', 'identity'] / 1e6:.2f} MB ({sizes['full', 'gzip'] / 1e6:.2f} MB gzip), "
        f"accounts {sizes['accounts', 'identity'] / 1e6:.2f} MB ({sizes['accounts', 'gzip'] / 1e6:.2f} MB gzip)",
    ]
    lines += [f"  {label}: {cost:.3f} s per slot ({cost / SLOT_S:.2f} of a slot)" for label, cost in costs.items()]
    lines.append(f"  baseline / now: {baseline / now:.2f}x")
    return lines + ten_minutes(slots, realtime)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=1500, help="ten minutes of slots by default")
    parser.add_argument("--realtime", action="store_true", help="a block every 400 ms, the lag sampled live")
    args = parser.parse_args()
    for line in solana_mainnet(args.slots, args.realtime):
        print(line)
