"""The targeted look at one address ("J'ai payé"): recent blocks, token logs and the balance."""

import logging

import pytest

from infra.devnet.fault_proxy import FaultProxy, per_call
from infra.devnet.tokens import forward_eth, send, transfer_token
from kernodeck_watchers.chains.base import NodeError, SeenTransfer
from kernodeck_watchers.chains.ethereum import EthereumClient


def height(receipt: dict) -> int:
    return int(receipt["blockNumber"], 16)


def test_recent_eth_and_token_transfers_are_reported_with_their_blocks(anvil, client, tokens, new_address, caplog):
    address = new_address()
    before = anvil.wait_receipt(send(anvil, {"to": address, "value": "0x1"}))
    eth = anvil.wait_receipt(send(anvil, {"to": address, "value": hex(10**16)}))
    usdt = anvil.wait_receipt(transfer_token(anvil, tokens["USDT"], address, 42_000_000))
    anvil.rpc("anvil_mine", 3)

    with caplog.at_level(logging.WARNING):
        found = client.address_activity([address.upper().replace("0X", "0x")], since_height=height(eth))

    assert sorted(found, key=lambda f: f[1].height) == [
        (SeenTransfer(eth["transactionHash"], 0, address, None, 10**16), client.block(height(eth))),
        (
            SeenTransfer(
                usdt["transactionHash"], int(usdt["logs"][0]["logIndex"], 16), address, tokens["USDT"], 42_000_000
            ),
            client.block(height(usdt)),
        ),
    ]
    assert height(before) < height(eth)
    assert "balance without a matching ETH transfer" in caplog.text  # the wei sent before since_height


def test_an_internal_transfer_shows_only_as_a_logged_balance(anvil, client, forwarder, new_address, caplog):
    address = new_address()
    receipt = anvil.wait_receipt(forward_eth(anvil, forwarder, address, 10**15))

    with caplog.at_level(logging.WARNING):
        found = client.address_activity([address], since_height=height(receipt))

    assert found == []
    assert "balance without a matching ETH transfer" in caplog.text


def test_no_warning_when_the_balance_is_explained(anvil, client, new_address, caplog):
    address = new_address()
    receipt = anvil.wait_receipt(send(anvil, {"to": address, "value": "0x9"}))

    with caplog.at_level(logging.WARNING):
        found = client.address_activity([address], since_height=height(receipt))

    assert [t.amount for t, _ in found] == [9]
    assert "balance without" not in caplog.text


def test_several_addresses_are_looked_at_in_one_go(anvil, client, tokens, new_address):
    first, second, other = new_address(), new_address(), new_address()
    eth = anvil.wait_receipt(send(anvil, {"to": first, "value": "0x7"}))
    usdc = anvil.wait_receipt(transfer_token(anvil, tokens["USDC"], second, 3_000_000))
    anvil.wait_receipt(send(anvil, {"to": other, "value": "0x8"}))

    found = client.address_activity([first, second], since_height=height(eth))

    assert sorted((t.address, t.token, t.amount) for t, _ in found) == sorted(
        [(first, None, 7), (second, tokens["USDC"], 3_000_000)]
    )
    assert {block.hash for _, block in found} == {eth["blockHash"], usdc["blockHash"]}


def capped_logs(proxy: FaultProxy, most: int):
    """A provider that refuses eth_getLogs over more than `most` blocks (as they do, most at 1,000 or less)."""

    def reply_to(call: dict) -> dict | None:
        if call.get("method") != "eth_getLogs":
            return None
        spec = call["params"][0]
        if int(spec["toBlock"], 16) - int(spec["fromBlock"], 16) + 1 <= most:
            return None
        error = {"code": -32005, "message": f"query exceeds max block range {most}"}
        return {"jsonrpc": "2.0", "id": call["id"], "error": error}

    return per_call(proxy, reply_to)


def test_a_look_over_more_blocks_than_the_provider_allows_is_split(anvil, tokens, new_address):
    address = new_address()
    usdt = anvil.wait_receipt(transfer_token(anvil, tokens["USDT"], address, 7_000_000))
    anvil.rpc("anvil_mine", 11)
    with FaultProxy(anvil.rpc_url) as proxy:
        proxy.fault = capped_logs(proxy, 5)
        since = height(usdt) - 2
        with pytest.raises(NodeError):  # one eth_getLogs over 14 blocks: refused
            EthereumClient(proxy.url, timeout_s=10).address_activity([address], since_height=since)
        found = EthereumClient(proxy.url, timeout_s=10, logs_max_blocks=5).address_activity([address], since)
    assert [transfer.amount for transfer, _ in found] == [7_000_000]
