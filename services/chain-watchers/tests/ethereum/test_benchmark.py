"""Matching a realistic block (200 transactions, 500 Transfer logs) against 1,000,000 watched addresses
costs a small part of fetching and parsing that block from the node (target: under 10%)."""

import os
import sys
import time

from infra.devnet.tokens import deploy, send, send_call, transfer_token
from kernodeck_watchers.chains.ethereum import match_block

WATCHED = 1_000_000
PLAIN, SINGLE, DISPERSE, PER_DISPERSE = 100, 70, 30, 43 / 3  # 100 + 70 + 30 txs; 70 + 430 logs


def best_of(runs: int, fn) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def build_block(anvil, tokens, one_block, recipients) -> list[dict]:
    disperse = deploy(anvil, "Disperse")
    for token in (tokens["USDT"], tokens["USDC"]):
        anvil.wait_receipt(send_call(anvil, token, "approve(address,uint256)", disperse, 2**256 - 1))
    pick = iter(recipients)
    with one_block() as sent:
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


def test_matching_is_under_a_tenth_of_fetch_and_parse(anvil, client, tokens, one_block):
    raw = os.urandom(20 * WATCHED)
    watched = {"0x" + raw[i : i + 20].hex() for i in range(0, len(raw), 20)}
    recipients = ["0x" + os.urandom(20).hex() for _ in range(PLAIN + SINGLE + 430)]
    watched.update(recipients[::10])  # one recipient in ten is a deposit address
    receipts = build_block(anvil, tokens, one_block, recipients)
    ref = client.block(int(receipts[0]["blockNumber"], 16))

    traced_s, contents = best_of(1, lambda: client.fetch_block(ref))
    client.traces = False  # anvil traces a block in quadratic time: time the rest on its own
    fetch_s, _ = best_of(5, lambda: client.fetch_block(ref))
    match_s, matched = best_of(5, lambda: match_block(contents, watched))
    total_s, found = best_of(5, lambda: client.transfers_in_block(ref, watched))

    set_mb = (sys.getsizeof(watched) + sum(map(sys.getsizeof, watched))) / 2**20
    print(
        f"\nblock of {len(contents.transactions)} txs, {len(contents.logs)} Transfer logs, {len(found)} matches; "
        f"{len(watched):,} watched ({set_mb:.0f} MB): fetch+parse {fetch_s * 1e3:.1f} ms without traces, "
        f"{traced_s * 1e3:.0f} ms with them; match {match_s * 1e3:.2f} ms ({match_s / fetch_s:.1%} of the first), "
        f"transfers_in_block without traces {total_s * 1e3:.1f} ms"
    )
    assert (len(contents.transactions), len(contents.logs)) == (200, 500)
    assert all(r["status"] == "0x1" for r in receipts)
    assert set(found) == set(matched) and len(found) == len(recipients[::10])
    assert match_s < 0.1 * fetch_s
