"""The account chains' watchers matching a mainnet-size block against 1,000,000 watched addresses, next to its parse.

Run: .venv/bin/python bench/bench_chain_match.py [tron] [solana] [ethereum]

For each network, one block as its node answers the watcher (the bodies the
client reads for it), with a few payments to watched addresses among
strangers' transfers, then, run after run (bench/match_timing.py): the parse
of those bodies alone and the client's match of the freshly parsed block, in
CPU time, and the median of each run's ratio; beside it, the same for the
least any matcher must do: read one field of each transaction and log.
  - Tron: `getblockbynum` and `gettransactioninfobyblocknum` (visible=true) of a block of 300 transactions, two in
    three a USDT transfer (a TriggerSmartContract whose info holds the Transfer log), the rest TRX; matched by
    `tron.block_transfers`. The watched set is loaded from the watcher's own database (SQLite, migrated by its
    scripts) as the watcher loads it (`Watchlist.load`, each address's account id read from its row): its load
    time and memory are printed, beside the same load with the ids left out of the rows (each decoded at load,
    as before migration 0004), measured in the same run.
  - Solana: `getBlock` with `transactionDetails: "accounts"` of the double's mainnet traffic (1,200 votes, 600
    swaps); matched by `SolanaClient.transfers_in_block`.
  - Ethereum: `eth_getBlockByNumber` (full transactions) and `eth_getLogs` (Transfer) of a block of 200
    transactions and 500 Transfer logs; matched by `ethereum.match_block` (without traces: bench_ethereum_match.py
    reads a real anvil block with them).
Target: each match under 10% of its block's parse.
"""

import gc
import json
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solders.pubkey import Pubkey
from sqlalchemy import insert, update

from bench.match_timing import match_against_parse
from infra.devnet.solana_double.traffic import Traffic
from kernodeck_chains.addresses import tron_address_of
from kernodeck_chains.evm import TRANSFER_TOPIC
from kernodeck_kit import migrations
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_watchers.chains.base import BlockRef
from kernodeck_watchers.chains.ethereum import BlockContents, match_block
from kernodeck_watchers.chains.solana import SolanaClient
from kernodeck_watchers.chains.tron import TronClient, block_transfers
from kernodeck_watchers.domain.watched import WatchedAddresses
from kernodeck_watchers.store.tables import WatchedAddressRow
from kernodeck_watchers.store.unit import watcher_units
from kernodeck_watchers.watchlist import Watchlist

WATCHED = 1_000_000
PAID = 10
rng = random.Random(16)
USDT_TRON = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


def hexes(size: int) -> str:
    return rng.randbytes(size).hex()


def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise LookupError("VmRSS")


def report(name: str, shape: str, bodies: list[bytes], match, expected: int, floor) -> None:
    """`floor`: the least any matcher must read of the parsed block (one field of each transaction or log)."""
    timing = match_against_parse(bodies, match)
    least = match_against_parse(bodies, floor)
    assert len(timing.result) == expected, f"{name}: matched {len(timing.result)}, expected {expected}"
    print(f"{name}: {shape}, {sum(map(len, bodies)) / 2**20:.1f} MB of JSON, {expected} paid")
    print(
        f"  parse alone {timing.parse_ms:.1f} ms, match {timing.match_ms:.2f} ms (CPU, medians); {timing.verdict()}; "
        f"reading one field of each transaction and log alone: {least.match_ms:.2f} ms, {least.ratio:.1%} of the parse"
    )


# -- Tron ----------------------------------------------------------------------------------------------------
def tron_tx(txid: str, contract: dict) -> dict:
    raw = {"contract": [contract], "ref_block_bytes": hexes(2), "ref_block_hash": hexes(8),
           "expiration": 1_730_000_060_000, "fee_limit": 100_000_000, "timestamp": 1_730_000_000_000}  # fmt: skip
    return {"ret": [{"contractRet": "SUCCESS"}], "signature": [hexes(65)], "txID": txid, "raw_data": raw,
            "raw_data_hex": hexes(150)}  # fmt: skip


def tron_block(paid: list[str], strangers: list[str]) -> tuple[dict, list[dict]]:
    txs, infos, pay = [], [], iter(paid)
    paid_at = set(rng.sample(range(300), len(paid)))
    for n in range(300):
        txid, sender = hexes(32), rng.choice(strangers)
        to = next(pay) if n in paid_at else rng.choice(strangers)
        info = {"id": txid, "fee": 345_000, "blockNumber": 66_000_000, "blockTimeStamp": 1_730_000_000_000,
                "receipt": {"net_usage": 345}}  # fmt: skip
        if n % 3:
            data = "a9059cbb" + topic(to) + f"{rng.randrange(1, 10**10):064x}"
            value = {"data": data, "owner_address": sender, "contract_address": USDT_TRON}
            txs.append(tron_tx(txid, {"parameter": {"value": value, "type_url": "type.googleapis.com/protocol.TriggerSmartContract"},
                                      "type": "TriggerSmartContract"}))  # fmt: skip
            log = {"address": "a614f803b6fd780986a42c78ec9c7f77e6ded13c", "data": data[-64:],
                   "topics": [TRANSFER_TOPIC, topic(sender), topic(to)]}  # fmt: skip
            info |= {"contractResult": ["0" * 63 + "1"], "contract_address": USDT_TRON, "log": [log],
                     "receipt": {"energy_usage_total": 64_285, "net_usage": 345, "result": "SUCCESS",
                                 "energy_penalty_total": 49_635}}  # fmt: skip
        else:
            value = {"amount": rng.randrange(1, 10**9), "owner_address": sender, "to_address": to}
            txs.append(tron_tx(txid, {"parameter": {"value": value, "type_url": "type.googleapis.com/protocol.TransferContract"},
                                      "type": "TransferContract"}))  # fmt: skip
        infos.append(info)
    header = {"raw_data": {"number": 66_000_000, "txTrieRoot": hexes(32), "witness_address": strangers[0],
                           "parentHash": hexes(32), "version": 31, "timestamp": 1_730_000_000_000},
              "witness_signature": hexes(65)}  # fmt: skip
    return {"blockID": hexes(32), "block_header": header, "transactions": txs}, infos


_tron_hex: dict[str, str] = {}  # account ids of the addresses the block names


def topic(address: str) -> str:
    return "0" * 24 + _tron_hex[address]


def tron_watches(directory: str, watches: list[tuple[str, str]]) -> Store:
    """The watcher's own database (SQLite, migrated by its scripts) holding a live watch of each (address, account
    id as hex), as the watcher writes it."""
    url = f"sqlite:///{directory}/watcher.db"
    migrations.upgrade("kernodeck_watchers", url)
    store = Store(make_engine(url), "chain", relay=None)
    now = datetime.now(UTC)
    row = {"network": "tron", "token": None, "required_confirmations": 19, "added_at": now - timedelta(days=1),
           "watch_until": now + timedelta(days=1)}  # fmt: skip
    with store.engine.begin() as db:
        for start in range(0, len(watches), 50_000):
            batch = watches[start : start + 50_000]
            db.execute(insert(WatchedAddressRow.__table__),
                       [{**row, "address": a, "payment_id": a, "match_key": key} for a, key in batch])  # fmt: skip
    return store


def tron_load(store: Store) -> WatchedAddresses:
    """The watches loaded as the active Tron watcher loads them (`Watchlist.load`)."""
    watchlist = Watchlist("tron", str.strip, 19, TronClient.match_key)
    watchlist.load(watcher_units(store, "tron"), [], datetime.now(UTC))
    return watchlist.watched


def tron() -> None:
    def account() -> str:
        raw = rng.randbytes(20)
        address = tron_address_of(raw)
        _tron_hex[address] = raw.hex()
        return address

    watched_ids = [rng.randbytes(20) for _ in range(WATCHED)]
    paid = [account() for _ in range(PAID)]
    with tempfile.TemporaryDirectory() as directory:
        watches = [(tron_address_of(raw), raw.hex()) for raw in watched_ids] + [(a, _tron_hex[a]) for a in paid]
        store = tron_watches(directory, watches)
        del watches
        del watched_ids
        gc.collect()
        before, started = rss(), time.perf_counter()
        watched = tron_load(store)
        stored_s, growth = time.perf_counter() - started, rss() - before
        with store.engine.begin() as db:
            db.execute(update(WatchedAddressRow.__table__).values(match_key=None))
        started = time.perf_counter()
        tron_load(store)
        decoded_s = time.perf_counter() - started
        store.engine.dispose()
    gc.collect()
    print(f"tron watched set: {len(watched):,} addresses with their account ids loaded from the watcher's database "
          f"in {stored_s:.1f} s (ids read from the rows), RSS +{growth / 2**20:.0f} MB; with each id decoded at "
          f"load: {decoded_s:.1f} s ({decoded_s / stored_s:.1f}x)")  # fmt: skip
    block, infos = tron_block(paid, [account() for _ in range(2_000)])
    bodies = [json.dumps(block).encode(), json.dumps(infos).encode()]
    report("tron", "300 transactions, 200 USDT Transfer logs", bodies,
           lambda parsed: block_transfers(parsed[0], parsed[1], watched.addresses), PAID,
           lambda parsed: [tx["raw_data"] for tx in parsed[0]["transactions"]] + [i.get("log") for i in parsed[1]])  # fmt: skip


# -- Solana --------------------------------------------------------------------------------------------------
def solana() -> None:
    traffic = Traffic(votes=1200, swaps=600)
    blockhash = str(Pubkey(rng.randbytes(32)))
    items = traffic.transactions(300_000_000, blockhash, "accounts", 0)
    block = {"blockHeight": 280_000_000, "blockTime": 1_730_000_000, "blockhash": blockhash,
             "parentSlot": 299_999_999, "previousBlockhash": str(Pubkey(rng.randbytes(32))), "transactions": items}  # fmt: skip
    received = sorted(
        {(b["owner"]) for item in items[1200:] for b in item["meta"]["postTokenBalances"] if b.get("owner")}
    )
    paid = rng.sample(received, PAID)
    watched = {str(Pubkey(rng.randbytes(32))) for _ in range(WATCHED)} | set(paid)
    client = SolanaClient("http://node.invalid")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": block}).encode()

    def match(parsed: list) -> list:
        result = parsed[0]["result"]
        ref = BlockRef(300_000_000, result["blockhash"], result["previousBlockhash"], result["blockTime"], result)
        return client.transfers_in_block(ref, watched)

    expected = len(match([json.loads(body)]))
    assert expected >= PAID
    report("solana", f"{len(items):,} transactions (1,200 votes, 600 swaps)", [body], match, expected,
           lambda parsed: [item["meta"] for item in parsed[0]["result"]["transactions"]])  # fmt: skip


# -- Ethereum ------------------------------------------------------------------------------------------------
def ethereum_tx(to: str, value: int, data: str) -> dict:
    return {"blockHash": "0x" + hexes(32), "blockNumber": "0x1400000", "from": "0x" + hexes(20), "gas": "0x5208",
            "gasPrice": "0x3b9aca00", "maxFeePerGas": "0x4a817c800", "maxPriorityFeePerGas": "0x3b9aca00",
            "hash": "0x" + hexes(32), "input": data, "nonce": hex(rng.randrange(10**5)), "to": to,
            "transactionIndex": "0x1", "value": hex(value), "type": "0x2", "accessList": [], "chainId": "0x1",
            "v": "0x1", "r": "0x" + hexes(32), "s": "0x" + hexes(32), "yParity": "0x1"}  # fmt: skip


def ethereum() -> None:
    watched = {"0x" + hexes(20) for _ in range(WATCHED)}
    paid = ["0x" + hexes(20) for _ in range(PAID)]
    watched.update(paid)
    to_pay, paid_at = iter(paid), set(rng.sample(range(67 + 500), PAID))  # 67 ETH payments, 500 logs
    token = "0xdac17f958d2ee523a2206206994597c13d831ec7"
    txs, logs, n = [], [], 0
    for i in range(200):
        if i % 3:
            data = "0xa9059cbb" + hexes(32) + hexes(32) + hexes(rng.choice((0, 100, 400)))
            txs.append(ethereum_tx(token, 0, data))
        else:
            to = next(to_pay) if n in paid_at else "0x" + hexes(20)
            n += 1
            txs.append(ethereum_tx(to, rng.randrange(1, 10**18), "0x"))
    for i in range(500):
        to = next(to_pay) if n in paid_at else "0x" + hexes(20)
        n += 1
        logs.append({"address": token, "topics": ["0x" + TRANSFER_TOPIC, "0x" + "0" * 24 + hexes(20), "0x" + "0" * 24 + to[2:]],
                     "data": f"0x{rng.randrange(1, 10**12):064x}", "blockNumber": "0x1400000",
                     "transactionHash": txs[i % 200]["hash"], "transactionIndex": hex(i % 200),
                     "blockHash": txs[0]["blockHash"], "logIndex": hex(i), "removed": False})  # fmt: skip
    block = {"hash": txs[0]["blockHash"], "number": "0x1400000", "parentHash": "0x" + hexes(32),
             "timestamp": "0x67000000", "logsBloom": "0x" + hexes(256), "transactions": txs}  # fmt: skip
    bodies = [json.dumps({"jsonrpc": "2.0", "id": 1, "result": block}).encode(),
              json.dumps([{"jsonrpc": "2.0", "id": 2, "result": logs}]).encode()]  # fmt: skip

    def match(parsed: list) -> list:
        return match_block(BlockContents(parsed[0]["result"]["transactions"], parsed[1][0]["result"], None), watched)

    report("ethereum", "200 transactions, 500 Transfer logs", bodies, match, PAID,
           lambda parsed: [tx["to"] for tx in parsed[0]["result"]["transactions"]]
           + [entry["topics"] for entry in parsed[1][0]["result"]])  # fmt: skip


def main() -> None:
    chosen = sys.argv[1:] or ["tron", "solana", "ethereum"]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for network in chosen:
        {"tron": tron, "solana": solana, "ethereum": ethereum}[network]()
        gc.collect()


if __name__ == "__main__":
    main()
