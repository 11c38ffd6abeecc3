"""The Solana matcher's fast path (transactions without a raised balance or a watched owner passed over) finds
what reading every account of every transaction finds."""

import random

import pytest

from infra.devnet.solana_double.traffic import Traffic
from kernodeck_watchers.chains.base import SeenTransfer
from kernodeck_watchers.chains.solana import _transfers

pytestmark = pytest.mark.unit


def reading_every_account(item: dict, watched: set[str]) -> list[SeenTransfer]:
    """The matching before the fast path: every key's balances, every token balance's amounts."""
    meta = item["meta"]
    if meta is None or meta["err"] is not None:
        return []
    transaction = item["transaction"]
    keys = [account["pubkey"] for account in transaction["accountKeys"]]
    txid = transaction["signatures"][0]
    found = [
        SeenTransfer(txid, index, key, None, post - pre)
        for index, (key, pre, post) in enumerate(zip(keys, meta["preBalances"], meta["postBalances"], strict=True))
        if key in watched and post > pre
    ]
    before = {b["accountIndex"]: int(b["uiTokenAmount"]["amount"]) for b in meta.get("preTokenBalances") or []}
    for after in meta.get("postTokenBalances") or []:
        owner = after.get("owner")
        received = int(after["uiTokenAmount"]["amount"]) - before.get(after["accountIndex"], 0)
        if owner in watched and received > 0:
            found.append(SeenTransfer(txid, after["accountIndex"], owner, after["mint"], received))
    return found


def mixed_block(rng: random.Random) -> list[dict]:
    """The double's votes and swaps, some changed: raised SOL balances, token accounts opened (no balance
    before), emptied or lowered, an owner left out, a failed transaction."""
    items = Traffic(votes=60, swaps=60, seed=16).transactions(1_000, "11111111111111111111111111111111", "accounts", 0)
    for item in items:
        meta = item["meta"]
        roll = rng.random()
        if roll < 0.3:
            index = rng.randrange(len(meta["postBalances"]))
            meta["postBalances"][index] = meta["preBalances"][index] + rng.choice((1, 10**9))
        elif roll < 0.4 and meta["preTokenBalances"]:
            meta["preTokenBalances"].pop(rng.randrange(len(meta["preTokenBalances"])))
        elif roll < 0.5 and meta["postTokenBalances"]:
            meta["postTokenBalances"][0]["uiTokenAmount"]["amount"] = "0"
        elif roll < 0.55 and meta["postTokenBalances"]:
            meta["postTokenBalances"][-1].pop("owner")
        elif roll < 0.6:
            meta["err"] = {"InstructionError": [0, "Custom"]}
    return items


def test_the_fast_path_finds_what_reading_every_account_finds():
    rng = random.Random(16)
    items = mixed_block(rng)
    named = sorted(
        {account["pubkey"] for item in items for account in item["transaction"]["accountKeys"]}
        | {b["owner"] for item in items for b in item["meta"]["postTokenBalances"] if "owner" in b}
    )
    for share in (0.02, 0.3, 1.0):
        watched = set(rng.sample(named, int(len(named) * share)))
        expected = [t for item in items for t in reading_every_account(item, watched)]
        assert [t for item in items for t in _transfers(item, watched)] == expected
        assert expected or share < 0.1
    assert any(t.token is None for item in items for t in _transfers(item, set(named)))
    assert any(t.token for item in items for t in _transfers(item, set(named)))
