"""The Ethereum watcher's matching against 1,000,000 watched addresses, next to fetching and parsing the block.

Run: .venv/bin/python bench/bench_ethereum_match.py

Mines, on a local anvil (infra/devnet) with the devnet's tokens, one realistic
block: 100 plain ETH payments, 70 single token transfers and 30 Disperse
batches, 200 transactions and 500 Transfer logs, one recipient in ten a
watched address. Then times (best of several runs):
  - fetch+parse: `EthereumClient.block` then `fetch_block`, as a scan reads a block, with anvil's traces (once) and without;
  - match: `chains.ethereum.match_block` of the fetched block against the watched set;
  - `transfers_in_block`, both together, without traces.
Target: matching under 10% of fetch+parse (without traces: anvil traces a block in quadratic time).
"""

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from infra.devnet.nodes import AnvilNode, find_binary
from infra.devnet.tokens import deploy, deploy_tokens, send, send_call, transfer_token
from kernodeck_watchers.chains.ethereum import EthereumClient, match_block

WATCHED = 1_000_000
PLAIN, SINGLE, DISPERSE, PER_DISPERSE = 100, 70, 30, 43 / 3  # 100 + 70 + 30 txs; 70 + 430 logs
RUNS = 5


def best_of(runs: int, fn) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def build_block(anvil: AnvilNode, tokens: dict, recipients: list[str]) -> list[dict]:
    """The block's receipts."""
    disperse = deploy(anvil, "Disperse")
    for token in (tokens["USDT"], tokens["USDC"]):
        anvil.wait_receipt(send_call(anvil, token, "approve(address,uint256)", disperse, 2**256 - 1))
    pick = iter(recipients)
    with anvil.one_block() as sent:
        for i in range(PLAIN):
            sent.append(send(anvil, {"to": next(pick), "value": hex(10**15 + i)}, sender=anvil.accounts[1 + i % 9]))
        for i in range(SINGLE):
            sent.append(transfer_token(anvil, tokens["USDT" if i % 2 else "USDC"], next(pick), 1_000_000 + i))
        for i in range(DISPERSE):
            count = int(PER_DISPERSE * (i + 1)) - int(PER_DISPERSE * i)
            to = [next(pick) for _ in range(count)]
            sent.append(
                send_call(
                    anvil, disperse, "disperseToken(address,address[],uint256[])", tokens["USDT"], to, [7] * count
                )
            )
    return sent.receipts


def measure(anvil: AnvilNode) -> None:
    raw = os.urandom(20 * WATCHED)
    watched = {"0x" + raw[i : i + 20].hex() for i in range(0, len(raw), 20)}
    recipients = ["0x" + os.urandom(20).hex() for _ in range(PLAIN + SINGLE + 430)]
    watched.update(recipients[::10])  # one recipient in ten is a deposit address
    receipts = build_block(anvil, deploy_tokens(anvil), recipients)
    client = EthereumClient(anvil.rpc_url, timeout_s=600)  # anvil traces a block in quadratic time
    height = int(receipts[0]["blockNumber"], 16)

    def fetched():  # as a scan reads a block: by height (the full block), then its logs (and traces)
        return client.fetch_block(client.block(height))

    traced_s, contents = best_of(1, fetched)
    client.tracer = None  # anvil traces a block in quadratic time: time the rest on its own
    fetch_s, _ = best_of(RUNS, fetched)
    match_s, matched = best_of(RUNS, lambda: match_block(contents, watched))
    total_s, found = best_of(RUNS, lambda: client.transfers_in_block(client.block(height), watched))

    assert (len(contents.transactions), len(contents.logs)) == (200, 500)
    assert all(r["status"] == "0x1" for r in receipts)
    assert set(found) == set(matched) and len(found) == len(recipients[::10])
    set_mb = (sys.getsizeof(watched) + sum(map(sys.getsizeof, watched))) / 2**20
    ratio = match_s / fetch_s
    print(
        f"block of {len(contents.transactions)} txs, {len(contents.logs)} Transfer logs, {len(found)} matches; "
        f"{len(watched):,} watched ({set_mb:.0f} MB)"
    )
    print(
        f"  fetch+parse {fetch_s * 1e3:.1f} ms without traces, {traced_s * 1e3:.0f} ms with them; "
        f"match {match_s * 1e3:.2f} ms; transfers_in_block without traces {total_s * 1e3:.1f} ms"
    )
    print(f"  match / fetch+parse: {ratio:.1%} [target < 10%: {'ok' if ratio < 0.10 else 'MISSED'}]")


def main() -> None:
    if not AnvilNode.installed() or find_binary("solcjs") is None:
        print("skipped: anvil and solcjs are needed (infra/devnet/install.sh anvil solc)")
        return
    with tempfile.TemporaryDirectory() as workdir, AnvilNode(workdir) as anvil:
        measure(anvil)


if __name__ == "__main__":
    main()
