"""Mainnet-size blocks: payments found among the double's vote and swap traffic, gzip end to end, and blocks read
ahead and answered out of order still committed one by one in slot order."""

from __future__ import annotations

import gzip
import json
import time
import urllib.request
from datetime import UTC, datetime

import pytest
from solders.keypair import Keypair
from solders.rpc.responses import GetBlockResp
from solders.token.associated import get_associated_token_address

from infra.devnet.fault_proxy import FaultProxy
from infra.devnet.solana_double import RpcError, SolanaDouble
from infra.devnet.solana_double.traffic import VOTE_PROGRAM, Traffic
from infra.devnet.solana_double.wallet import Wallet
from kernodeck_watchers.chains.base import SeenTransfer
from kernodeck_watchers.chains.solana import SolanaClient
from kernodeck_watchers.domain.progress import Progress
from kernodeck_watchers.domain.watched import WatchedAddresses
from kernodeck_watchers.scanner import Scanner

from .conftest import airdropped
from .test_double import typed
from .test_tokens import new_mint, open_account, send_tokens

TRAFFIC = Traffic(votes=300, swaps=150)  # mainnet's shapes, a quarter of its count: the tests stay quick
ACCOUNTS = {"commitment": "confirmed", "transactionDetails": "accounts", "maxSupportedTransactionVersion": 0}


@pytest.fixture
def busy():
    """A double whose every block carries votes and swaps besides the transactions sent to it."""
    with SolanaDouble(traffic=TRAFFIC) as double:
        yield double


@pytest.fixture
def rich(busy) -> Keypair:
    return airdropped(busy)


def post(url: str, method: str, params: list, headers: dict[str, str]) -> tuple[dict[str, str], bytes]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json", **headers})
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(response.headers.items()), response.read()


def test_sol_and_token_payments_are_found_among_votes_and_swaps(busy, rich):
    wallet = Wallet(busy.url)
    mint = new_mint(busy, wallet, rich)
    watched = Keypair().pubkey()
    open_account(wallet, rich, watched, mint)
    busy.rpc("double_produceBlocks", 1)
    sol = wallet.transfer(rich, watched, 7_000_000)
    tokens = send_tokens(wallet, rich, mint, watched, 2_500_000)
    slot = busy.rpc("double_produceBlocks", 2) - 1
    client = SolanaClient(busy.url, commitment="confirmed")

    found = client.transfers_in_block(client.block(slot), {str(watched)})

    block = busy.rpc("getBlock", slot, ACCOUNTS)
    assert len(block["transactions"]) == 2 + TRAFFIC.count()
    votes = [t for t in block["transactions"] if t["transaction"]["accountKeys"][-1]["pubkey"] == VOTE_PROGRAM]
    assert len(votes) == TRAFFIC.votes
    keys = {t["transaction"]["signatures"][0]: t["transaction"]["accountKeys"] for t in block["transactions"]}
    token_account = [k["pubkey"] for k in keys[tokens]].index(str(get_associated_token_address(watched, mint)))
    assert found == [
        SeenTransfer(sol, 1, str(watched), None, 7_000_000),
        SeenTransfer(tokens, token_account, str(watched), str(mint), 2_500_000),
    ]
    # the traffic pays its own accounts: each swap's trader gets tokens, each vote's identity pays its fee
    swap = block["transactions"][-1]
    trader = swap["transaction"]["accountKeys"][0]["pubkey"]
    assert client.transfers_in_block(client.block(slot), {trader})[0].token is not None


def test_the_double_compresses_for_a_client_that_asks_and_the_client_reads_it(busy):
    slot = busy.rpc("double_produceBlocks", 3) - 1
    params = [slot, ACCOUNTS]

    plain_headers, plain = post(busy.url, "getBlock", params, {})
    gzip_headers, compressed = post(busy.url, "getBlock", params, {"Accept-Encoding": "gzip"})
    _, refused = post(busy.url, "getBlock", params, {"Accept-Encoding": "gzip;q=0, identity"})

    assert "Content-Encoding" not in plain_headers and gzip_headers["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(compressed)) == json.loads(plain) == json.loads(refused)
    assert len(compressed) * 3 < len(plain)  # several megabytes on mainnet: compression is what makes it fit
    client = SolanaClient(busy.url, commitment="confirmed")
    assert client.rpc.headers["Accept-Encoding"] == "gzip"
    assert client.block(slot).hash == json.loads(plain)["result"]["blockhash"]


def test_blocks_answered_out_of_order_are_committed_in_slot_order(units, events, busy, rich):
    """Each getBlock answer is held back longer the lower its slot, so the window's reads finish newest first;
    payments in several slots, with skipped slots between them, are still seen slot by slot."""
    wallet = Wallet(busy.url)
    watched = Keypair().pubkey()
    finished: list[int] = []

    def later_for_lower_slots(path: str, body) -> None:
        if (
            isinstance(body, dict)
            and body.get("method") == "getBlock"
            and body["params"][1].get("transactionDetails") == "accounts"
        ):
            time.sleep(0.05 * (8 - body["params"][0] % 8))
            finished.append(body["params"][0])
        return None

    with FaultProxy(busy.url) as proxy:
        proxy.fault = later_for_lower_slots
        addresses = WatchedAddresses(default_required=1)
        addresses.add(str(watched), 1)
        watcher = Scanner(
            units=units,
            client=SolanaClient(proxy.url, commitment="confirmed", fetch_ahead=8),
            watched=addresses,
            progress=Progress(since=datetime.now(UTC)),
            history_blocks=50,
        )
        watcher.run()
        paid = []
        for amount in (1_000_000, 2_000_000, 3_000_000, 4_000_000):
            paid.append(wallet.transfer(rich, watched, amount))
            busy.rpc("double_produceBlocks", 1)
            busy.rpc("double_skipSlots", 1)
            busy.rpc("double_produceBlocks", 1)
        busy.rpc("double_produceBlocks", 1)
        watcher.run()

    assert finished != sorted(finished)  # the reads did overlap and come back out of order
    assert [(kind, txid) for kind, txid, _ in events.kinds() if kind == "transfer_seen"] == [
        ("transfer_seen", txid) for txid in paid
    ]
    seen = [e for e in events.all() if e["type"] == "transfer_seen"]
    assert [int(e["amount"]) for e in seen] == [1_000_000, 2_000_000, 3_000_000, 4_000_000]
    assert [e["block_height"] for e in seen] == sorted(e["block_height"] for e in seen)


def test_the_traffic_has_agave_shapes_in_full_and_accounts_details(busy, rich):
    slot = busy.rpc("double_produceBlocks", 3) - 2
    config = {"commitment": "confirmed", "maxSupportedTransactionVersion": 0}

    full = busy.rpc("getBlock", slot, config)
    accounts = busy.rpc("getBlock", slot, ACCOUNTS)
    signatures = busy.rpc("getBlock", slot, {**config, "transactionDetails": "signatures"})["signatures"]

    typed(GetBlockResp, full)
    typed(GetBlockResp, accounts)
    assert [t["transaction"]["signatures"] for t in full["transactions"]] == [[s] for s in signatures]
    assert [t["transaction"]["signatures"] for t in accounts["transactions"]] == [[s] for s in signatures]
    assert len(set(signatures)) == TRAFFIC.count()  # the airdrop's block is the one before
    for item, listed in zip(full["transactions"], accounts["transactions"], strict=True):
        message, meta = item["transaction"]["message"], item["meta"]
        loaded = meta["loadedAddresses"]
        keys = message["accountKeys"] + loaded["writable"] + loaded["readonly"]
        assert [a["pubkey"] for a in listed["transaction"]["accountKeys"]] == keys
        assert listed["meta"]["postTokenBalances"] == meta["postTokenBalances"]
        assert len(meta["preBalances"]) == len(meta["postBalances"]) == len(keys)
    following = busy.rpc("getBlock", slot + 1, ACCOUNTS)["transactions"]
    vote, next_vote = accounts["transactions"][0]["meta"], following[0]["meta"]
    assert next_vote["preBalances"][0] == vote["postBalances"][0]  # the same validator, its fee paid once a slot
    for refused, code in (({"encoding": "base64"}, -32602), ({"maxSupportedTransactionVersion": None}, -32015)):
        with pytest.raises(RpcError) as raised:
            busy.rpc("getBlock", slot, {**config, **refused})
        assert raised.value.code == code
