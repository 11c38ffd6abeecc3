"""The Ethereum watcher behind a fault-injecting proxy in front of anvil, as behind a load-balanced provider: a
block by number answered `null` by a backend that has not got it yet while another announced it as the tip, and a
backend a few blocks behind the scanned chain. The rule each time: no payment lost, no transfer reverted that is
still canonical, the network never reported lagging for it."""

import json
import random
from collections import Counter

import pytest

from infra.devnet.fault_proxy import Reply
from infra.devnet.tokens import send, transfer_token
from kernodeck_watchers.config import DEFAULT_TIP_DELAY_BLOCKS, WatcherSettings

CONFIRMATIONS = 2
NULLS_PER_BLOCK = 3  # how many times a backend answers null for a block before it has it
TIP_DELAY = DEFAULT_TIP_DELAY_BLOCKS["ethereum"]  # as in production: a block below the announced tip


@pytest.fixture
def watcher_settings(proxy, settings_on) -> WatcherSettings:
    return settings_on(
        proxy.url,
        ethereum_confirmations=CONFIRMATIONS,
        ethereum_lag_blocks=2,
        ethereum_tip_delay_blocks=TIP_DELAY,
    )


def mine(anvil, followed, blocks: int) -> None:
    for _ in range(blocks):
        anvil.rpc("evm_mine")
        followed()


def rpc_reply(body: dict, result) -> Reply:
    reply = {"jsonrpc": "2.0", "id": body.get("id"), "result": result}
    return Reply(200, json.dumps(reply).encode(), {"Content-Type": "application/json"})


def block_by_number(body) -> int | None:
    """The height a single eth_getBlockByNumber asks for (None for a tag such as "latest", or another call)."""
    if not isinstance(body, dict) or body.get("method") != "eth_getBlockByNumber":
        return None
    tag = (body.get("params") or [None])[0]
    return int(tag, 16) if isinstance(tag, str) and tag.startswith("0x") else None


@pytest.fixture
def nulls(proxy) -> list[int]:
    """From before the watcher starts: "latest" comes from a backend that has the newest block, a block by number,
    the first few times it is asked for, from one that has not got it yet. The heights answered null."""
    asked: Counter[int] = Counter()
    answered: list[int] = []

    def backend_without_the_newest_blocks(path, body):
        wanted = block_by_number(body)
        if wanted is None:
            return None
        asked[wanted] += 1
        if asked[wanted] > NULLS_PER_BLOCK:
            return None
        answered.append(wanted)
        return rpc_reply(body, None)

    proxy.fault = backend_without_the_newest_blocks
    return answered


def test_null_for_a_block_the_tip_announced_loses_nothing_and_is_not_an_outage(
    anvil, tokens, nulls, watched, followed, tap
):
    eth = send(anvil, {"to": watched, "value": hex(7_000)})  # automine: a block of its own
    followed()
    usdt = transfer_token(anvil, tokens["USDT"], watched, 8_000)
    followed()
    mine(anvil, followed, CONFIRMATIONS + TIP_DELAY)

    for txid in (eth, usdt):
        tap.wait_for("transfer_confirmed", txid=txid, confirmations=CONFIRMATIONS)
    assert {anvil.wait_receipt(eth)["blockNumber"], anvil.wait_receipt(usdt)["blockNumber"]} <= {
        hex(h) for h in nulls
    }  # the blocks holding the payments were each answered null first
    assert "transfer_reverted" not in [e["type"] for e in tap.transfers()]
    assert not tap.lagging_reported()


def test_a_backend_behind_the_scanned_chain_reverts_nothing(anvil, node_height, proxy, watched, followed, tap, wait):
    txid = send(anvil, {"to": watched, "value": hex(9_000)})
    mine(anvil, followed, TIP_DELAY)
    tap.wait_for("transfer_seen", txid=txid)
    behind = node_height() - 3
    behind_block = anvil.rpc("eth_getBlockByNumber", hex(behind), False)
    tips_answered = []
    balancer = random.Random(17)  # a load balancer's pick, the same every run

    def lagging_backend(path, body):
        # Half the requests go to a backend three blocks behind: its tip is older, newer blocks are null.
        if not isinstance(body, dict) or balancer.random() < 0.5:
            return None
        wanted = block_by_number(body)
        if body.get("method") == "eth_getBlockByNumber" and body["params"][0] == "latest":
            tips_answered.append(behind)
            return rpc_reply(body, behind_block)
        if wanted is not None and wanted > behind:
            return rpc_reply(body, None)
        return None

    proxy.fault = lagging_backend
    wait(lambda: len(tips_answered) >= 5, what="the watcher to read the lagging backend's tip")
    mine(anvil, followed, CONFIRMATIONS)
    tap.wait_for("transfer_confirmed", txid=txid, confirmations=CONFIRMATIONS)
    wait(lambda: len(tips_answered) >= 10, what="more passes behind the lagging backend")

    assert "transfer_reverted" not in [e["type"] for e in tap.transfers(txid)]
    assert not tap.lagging_reported()
