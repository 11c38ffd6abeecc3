"""The Bitcoin watcher's matching against 1,000,000 watched addresses, next to fetching and parsing the block.

Run: .venv/bin/python bench/bench_watcher_match.py [--no-node]

Writes 1,000,000 watches into the watcher's own database (SQLite) and loads
them as the active watcher does (`Watchlist.load`) and measures the watched
set's memory: its objects, and the growth of the process's RSS, now and at
its peak while loading.
Then, for two blocks of 3,000 transactions and 7,000 outputs, times (medians of several runs):
  - fetch+parse: the watcher's own JSON-RPC client (`JsonRpc.call("getblock", hash, 2)`, Decimal amounts),
    in wall-clock time and in the calling thread's CPU time (the block's read and parse without the node's
    answer time: the served block's server thread is another thread);
  - run after run (bench/match_timing.py), the parse alone (`json.loads(..., parse_float=Decimal)` of the
    same body) and `chains.utxo.match` of the transactions it just parsed against the watched set, in CPU
    time, judged by the median of each run's ratio; beside it, the same for the least any matcher must do:
    read each output's address.
The blocks: a synthetic mainnet block in the node's verbosity-2 JSON shape
(P2WPKH, P2TR, P2PKH, P2SH and OP_RETURN outputs, witnesses, each
transaction's hex) served from a local HTTP server, so its fetch costs
next to nothing; and, unless --no-node, a real block mined by a regtest
Bitcoin node (infra/devnet) and fetched from it.
Targets: matching under 10% of the parse alone in CPU time; the watched set under 300 MB.
"""

import base64
import gc
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import insert

from bench.match_timing import match_against_parse
from infra.devnet.nodes import BitcoinNode
from kernodeck_chains.base58 import ALPHABET as BASE58
from kernodeck_chains.bech32 import CHARSET as BECH32
from kernodeck_chains.bech32 import encode_segwit_address
from kernodeck_kit import migrations
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_watchers.chains.jsonrpc import JsonRpc
from kernodeck_watchers.chains.utxo import match
from kernodeck_watchers.domain.watched import WatchedAddresses
from kernodeck_watchers.store.tables import WatchedAddressRow
from kernodeck_watchers.store.unit import watcher_units
from kernodeck_watchers.watchlist import Watchlist

NETWORK = "bitcoin"
WATCHED = 1_000_000
TRANSACTIONS = 3_000
OUTPUTS = 7_000
PAID = 25  # outputs of the block that pay a watched address
RUNS = 15
rng = random.Random(7)


def p2wpkh() -> str:
    return "bc1q" + "".join(rng.choices(BECH32, k=38))


def p2tr() -> str:
    return "bc1p" + "".join(rng.choices(BECH32, k=58))


def base58(prefix: str) -> str:
    return prefix + "".join(rng.choices(BASE58, k=33))


def output_script(address: str | None) -> dict:
    if address is None:
        return {
            "asm": "OP_RETURN " + os.urandom(32).hex(),
            "desc": "raw(6a20...)#00000000",
            "hex": "6a20" + os.urandom(32).hex(),
            "type": "nulldata",
        }
    kinds = {
        "bc1q": ("witness_v0_keyhash", 22),
        "bc1p": ("witness_v1_taproot", 34),
        "1": ("pubkeyhash", 25),
        "3": ("scripthash", 23),
    }
    kind, size = next(value for prefix, value in kinds.items() if address.startswith(prefix))
    script = os.urandom(size).hex()
    return {
        "asm": f"0 {script[4:]}",
        "desc": f"addr({address})#{os.urandom(4).hex()}",
        "hex": script,
        "address": address,
        "type": kind,
    }


def random_address() -> str | None:
    roll = rng.random()
    if roll < 0.02:
        return None
    if roll < 0.62:
        return p2wpkh()
    if roll < 0.82:
        return p2tr()
    return base58("1") if roll < 0.92 else base58("3")


def synthetic_block(paid_addresses: list[str]) -> dict:
    """A mainnet-like block in getblock-verbosity-2 shape; `paid_addresses` are paid by some of its outputs."""
    per_tx = [1] * TRANSACTIONS
    for _ in range(OUTPUTS - TRANSACTIONS):
        per_tx[rng.randrange(TRANSACTIONS)] += 1
    paid_at = set(rng.sample(range(OUTPUTS), PAID))
    to_pay = iter(paid_addresses)
    txs, n_output = [], 0
    for i, outputs in enumerate(per_tx):
        inputs = 1 if i == 0 else rng.choice((1, 1, 2, 2, 3, 5))
        size = 10 + 68 * inputs + 34 * outputs
        vout = []
        for n in range(outputs):
            address = next(to_pay) if n_output in paid_at else random_address()
            value = rng.randrange(546, 5 * 10**8) / 10**8
            vout.append({"value": value, "n": n, "scriptPubKey": output_script(address)})
            n_output += 1
        vin = [
            {"coinbase": os.urandom(40).hex(), "txinwitness": ["00" * 32], "sequence": 4294967295}
            if i == 0
            else {
                "txid": os.urandom(32).hex(),
                "vout": rng.randrange(4),
                "scriptSig": {"asm": "", "hex": ""},
                "txinwitness": [os.urandom(71).hex(), os.urandom(33).hex()],
                "sequence": 4294967293,
            }
            for _ in range(inputs)
        ]
        txid = os.urandom(32).hex()
        tx = {"txid": txid, "hash": os.urandom(32).hex(), "version": 2, "size": size, "vsize": size - 27 * inputs,
              "weight": 4 * size - 81 * inputs, "locktime": 0, "vin": vin, "vout": vout, "hex": os.urandom(size).hex()}  # fmt: skip
        if i:
            tx["fee"] = rng.randrange(200, 50_000) / 10**8
        txs.append(tx)
    return {
        "hash": os.urandom(32).hex(), "confirmations": 1, "height": 870_000, "version": 536_870_912,
        "versionHex": "20000000", "merkleroot": os.urandom(32).hex(), "time": 1_730_000_000,
        "mediantime": 1_729_998_000, "nonce": 123_456, "bits": "17030ecd", "difficulty": 92_049_594_548_485.48,
        "chainwork": os.urandom(32).hex(), "nTx": len(txs), "previousblockhash": os.urandom(32).hex(),
        "strippedsize": 800_000, "size": 1_600_000, "weight": 3_993_000, "tx": txs,
    }  # fmt: skip


def memory(key: str) -> int:
    """VmRSS (resident now) or VmHWM (its peak) of this process, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) * 1024
    raise LookupError(key)


def watched_database(directory: str) -> Store:
    """The watcher's own database (SQLite, migrated by its scripts) holding 1,000,000 live watches."""
    url = f"sqlite:///{directory}/watcher.db"
    migrations.upgrade("kernodeck_watchers", url)
    store = Store(make_engine(url), "chain", relay=None)
    now = datetime.now(UTC)
    row = {"network": NETWORK, "token": None, "required_confirmations": 2, "added_at": now - timedelta(days=1),
           "watch_until": now + timedelta(days=1)}  # fmt: skip
    with store.engine.begin() as db:
        for start in range(0, WATCHED, 50_000):
            batch = sorted(p2wpkh() if i % 5 else p2tr() for i in range(start, start + 50_000))
            db.execute(insert(WatchedAddressRow.__table__), [{**row, "address": a, "payment_id": a} for a in batch])
    return store


def watched_set(store: Store) -> tuple[WatchedAddresses, int, int, int]:
    """The 1,000,000 watches loaded as the active watcher loads them (`Watchlist.load`); the set's bytes, and
    this process's RSS growth and peak growth while loading."""
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM from here
    rss_before = memory("VmRSS")
    watchlist = Watchlist(NETWORK, str.strip, default_required=2)
    watchlist.load(watcher_units(store, NETWORK), [], datetime.now(UTC))
    gc.collect()
    watched = watchlist.watched
    size = sys.getsizeof(watched.addresses) + sys.getsizeof(watched._required)
    size += sum(sys.getsizeof(address) for address in watched.addresses)
    return watched, size, memory("VmRSS") - rss_before, memory("VmHWM") - rss_before


def serve(body: bytes) -> ThreadingHTTPServer:
    class Node(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Node)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def raw_getblock(url: str, auth: str, block_hash: str) -> bytes:
    request = urllib.request.Request(
        url,
        data=json.dumps({"jsonrpc": "1.0", "id": 1, "method": "getblock", "params": [block_hash, 2]}).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Basic {auth}"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def median_ms(action, runs: int = RUNS, clock=time.perf_counter) -> float:
    samples = []
    for _ in range(runs):
        start = clock()
        action()
        samples.append((clock() - start) * 1000)
    return statistics.median(samples)


def read_addresses(txs: list[dict]) -> list[str | None]:
    """What any matcher must do at least: read each output's address."""
    return [out["scriptPubKey"].get("address") for tx in txs for out in tx["vout"]]


def report(name: str, rpc: JsonRpc, body: bytes, block_hash: str, watched: WatchedAddresses) -> None:
    block = json.loads(body, parse_float=Decimal)["result"]
    outputs = sum(len(tx["vout"]) for tx in block["tx"])
    fetch_parse = median_ms(lambda: rpc.call("getblock", block_hash, 2))
    fetch_parse_cpu = median_ms(lambda: rpc.call("getblock", block_hash, 2), clock=time.thread_time)
    timing = match_against_parse([body], lambda parsed: match(parsed[0]["result"]["tx"], watched.addresses, NETWORK))
    reading = match_against_parse([body], lambda parsed: read_addresses(parsed[0]["result"]["tx"]))
    found = len(timing.result)
    assert found == PAID, f"matched {found} outputs, expected {PAID}"
    print(
        f"{name}: {len(block['tx']):,} transactions, {outputs:,} outputs, {len(body) / 2**20:.1f} MB of JSON, {found} paid"
    )
    print(
        f"  fetch+parse {fetch_parse:.1f} ms wall clock; in this thread's CPU time: fetch+parse {fetch_parse_cpu:.1f} ms, "
        f"parse alone {timing.parse_ms:.1f} ms, match {timing.match_ms:.2f} ms, "
        f"reading each output's address alone {reading.match_ms:.2f} ms ({reading.ratio:.1%} of the parse)"
    )
    print(
        f"  {timing.verdict()}; match / fetch+parse (CPU): {timing.match_ms / fetch_parse_cpu:.1%}; "
        f"match / fetch+parse (wall): {timing.match_ms / fetch_parse:.1%}; "
        f"match / reading alone: {timing.match_ms / reading.match_ms:.2f}x"
    )


def synthetic(watched: WatchedAddresses) -> None:
    paid = rng.sample(sorted(watched.addresses), PAID)
    block = synthetic_block(paid)
    body = json.dumps({"result": block, "error": None, "id": 1}).encode()
    server = serve(body)
    try:
        rpc = JsonRpc(f"http://127.0.0.1:{server.server_address[1]}", 30, user="bench", password="bench", version="1.0")
        report("synthetic mainnet block, local HTTP", rpc, body, block["hash"], watched)
    finally:
        server.shutdown()


def regtest_block(node: BitcoinNode, rpc: JsonRpc, paid: list[str]) -> str:
    """Mine one block of 3,000 transactions and 7,000 outputs (`paid` among them); its hash."""
    funding = [node.rpc("getnewaddress", "", "bech32") for _ in range(TRANSACTIONS)]
    for start in range(0, TRANSACTIONS, 1000):
        node.rpc("sendmany", "", {address: "0.01" for address in funding[start : start + 1000]})
    node.mine(1)
    coins = {u["address"]: u for u in node.rpc("listunspent", 1) if u["address"] in set(funding)}
    per_tx = [2] * TRANSACTIONS
    for _ in range(OUTPUTS - 2 * TRANSACTIONS):
        per_tx[rng.randrange(TRANSACTIONS)] += 1
    to_pay, paid_at = iter(paid), set(rng.sample(range(OUTPUTS), PAID))
    raws, n = [], 0
    for address, outputs in zip(funding, per_tx, strict=True):
        coin = coins[address]
        pays = {}
        for _ in range(outputs):
            pays[next(to_pay) if n in paid_at else encode_segwit_address("bcrt", 0, os.urandom(20))] = "0.0009"
            n += 1
        raws.append([[{"txid": coin["txid"], "vout": coin["vout"]}], pays])
    created = rpc.batch([("createrawtransaction", raw) for raw in raws])
    signed = rpc.batch([("signrawtransactionwithwallet", [raw]) for raw in created])
    sent = rpc.batch([("sendrawtransaction", [tx["hex"], 0]) for tx in signed])
    refused = [error for error in sent if isinstance(error, Exception)]
    assert not refused, f"{len(refused)} transactions refused, first: {refused[0]}"
    (block_hash,) = node.mine(1)
    return block_hash


def regtest(watched: WatchedAddresses) -> None:
    # Knots mines small blocks by default (300 kB); a full mainnet-sized one is asked for.
    with BitcoinNode(extra_args=("-blockmaxsize=4000000", "-blockmaxweight=4000000")) as node:
        rpc = JsonRpc(node.rpc_url, 600, user=node.rpcuser, password=node.rpcpassword, version="1.0")
        paid = [encode_segwit_address("bcrt", 0, os.urandom(20)) for _ in range(PAID)]
        for address in paid:
            watched.add(address, 2)
        block_hash = regtest_block(node, rpc, paid)
        auth = base64.b64encode(f"{node.rpcuser}:{node.rpcpassword}".encode()).decode()
        body = raw_getblock(node.rpc_url, auth, block_hash)
        report("regtest block fetched from bitcoind", rpc, body, block_hash, watched)


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        store = watched_database(directory)
        watched, size, rss_growth, peak_growth = watched_set(store)
        store.engine.dispose()
    verdict = "ok" if max(size, rss_growth, peak_growth) < 300 * 2**20 else "MISSED"
    print(f"watched set: {len(watched):,} addresses loaded from the watcher's database, {size / 2**20:.0f} MB of "
          f"objects ({size / len(watched):.0f} B each), RSS +{rss_growth / 2**20:.0f} MB, "
          f"peak +{peak_growth / 2**20:.0f} MB while loading [target < 300 MB: {verdict}]")  # fmt: skip
    synthetic(watched)
    if "--no-node" not in sys.argv:
        if BitcoinNode.installed():
            regtest(watched)
        else:
            print("regtest block: skipped, no Bitcoin node (infra/devnet/install.sh bitcoin)")


if __name__ == "__main__":
    main()
