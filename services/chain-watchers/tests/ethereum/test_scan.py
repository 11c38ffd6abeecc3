"""Scanning blocks of a real anvil: ETH, ERC-20 and internal transfers, failures, block refs, reorgs."""

import itertools

import pytest

from infra.devnet.fault_proxy import FaultProxy, per_call
from infra.devnet.tokens import deploy, forward_eth, send, send_call, transfer_token
from kernodeck_watchers.chains.base import NodeError, SeenTransfer
from kernodeck_watchers.chains.ethereum import TRANSFER_TOPIC, EthereumClient, bloom_may_hold

REVERT_ALWAYS = "0x5f5ffd"  # PUSH0 PUSH0 REVERT: code that refuses every call and payment


def test_eth_to_a_watched_address_is_found_and_others_are_not(anvil, client, one_block, ref_of, new_address):
    watched, other = new_address(), new_address()
    with one_block() as sent:
        sent.append(send(anvil, {"to": other, "value": hex(10**18)}))
        sent.append(send(anvil, {"to": watched.upper().replace("0X", "0x"), "value": hex(12_345_678_901_234_567)}))

    found = client.transfers_in_block(ref_of(sent.receipts[0]), {watched})

    assert found == [SeenTransfer(sent[1], 0, watched, None, 12_345_678_901_234_567)]


def test_token_transfers_carry_the_contract_that_logged_them(anvil, client, tokens, one_block, ref_of, new_address):
    watched = new_address()
    with one_block() as sent:
        sent.append(transfer_token(anvil, tokens["USDT"], watched, 25_000_000))  # TetherLike: returns no bool
        sent.append(transfer_token(anvil, tokens["USDC"], watched, 7_000_001))
        sent.append(transfer_token(anvil, tokens["FAKE_USDT"], watched, 25_000_000))  # symbol USDT too
        sent.append(transfer_token(anvil, tokens["USDC"], new_address(), 5))

    found = client.transfers_in_block(ref_of(sent.receipts[0]), {watched})

    log_index = [int(r["logs"][0]["logIndex"], 16) for r in sent.receipts]
    assert sorted(found, key=lambda t: t.index) == [
        SeenTransfer(sent[0], log_index[0], watched, tokens["USDT"], 25_000_000),
        SeenTransfer(sent[1], log_index[1], watched, tokens["USDC"], 7_000_001),
        SeenTransfer(sent[2], log_index[2], watched, tokens["FAKE_USDT"], 25_000_000),
    ]
    assert tokens["FAKE_USDT"] != tokens["USDT"]


def test_an_internal_transfer_is_found_under_its_call_position(anvil, client, forwarder, ref_of, new_address):
    watched = new_address()
    receipt = anvil.wait_receipt(forward_eth(anvil, forwarder, watched, 3 * 10**15))

    found = client.transfers_in_block(ref_of(receipt), {watched, forwarder})

    # the payment to the forwarder itself is the transaction's (index 0); what it sends on is frame 1
    assert found == [
        SeenTransfer(receipt["transactionHash"], 0, forwarder, None, 3 * 10**15),
        SeenTransfer(receipt["transactionHash"], -1, watched, None, 3 * 10**15),
    ]


def test_several_transfers_of_one_transaction_have_distinct_indexes(anvil, client, tokens, ref_of, new_address):
    a, b = new_address(), new_address()
    disperse = deploy(anvil, "Disperse")
    eth = anvil.wait_receipt(
        send_call(anvil, disperse, "disperseEther(address[],uint256[])", [a, b, a], [1, 2, 3], value=6)
    )
    anvil.wait_receipt(send_call(anvil, tokens["USDC"], "approve(address,uint256)", disperse, 10**6))
    usdc = anvil.wait_receipt(
        send_call(anvil, disperse, "disperseToken(address,address[],uint256[])", tokens["USDC"], [a, b], [4, 5])
    )

    eth_found = client.transfers_in_block(ref_of(eth), {a, b})
    usdc_found = client.transfers_in_block(ref_of(usdc), {a, b})

    txid = eth["transactionHash"]
    assert eth_found == [
        SeenTransfer(txid, -1, a, None, 1),
        SeenTransfer(txid, -2, b, None, 2),
        SeenTransfer(txid, -3, a, None, 3),
    ]
    assert [(t.index, t.address, t.amount) for t in usdc_found] == [
        (int(entry["logIndex"], 16), "0x" + entry["topics"][2][26:], int(entry["data"], 16)) for entry in usdc["logs"]
    ]


def test_failed_transactions_and_reverted_calls_are_not_reported(
    anvil, client, tokens, forwarder, one_block, ref_of, new_address
):
    paid, refusing = new_address(), new_address()
    anvil.rpc("anvil_setCode", refusing, REVERT_ALWAYS)
    with one_block() as sent:
        sent.append(send(anvil, {"to": refusing, "value": hex(10**16)}, gas=100_000))  # the transaction fails
        sent.append(forward_eth(anvil, forwarder, paid, 10**16, then_revert=True, gas=100_000))
        sent.append(forward_eth(anvil, forwarder, refusing, 10**16))  # inner call fails
        sent.append(transfer_token(anvil, tokens["USDC"], paid, 10**18, gas=100_000))  # more than the balance
        sent.append(send(anvil, {"to": paid, "value": hex(5)}))

    found = client.transfers_in_block(ref_of(sent.receipts[0]), {paid, refusing})

    assert [r["status"] for r in sent.receipts] == ["0x0", "0x0", "0x1", "0x0", "0x1"]
    assert found == [SeenTransfer(sent[4], 0, paid, None, 5)]


def test_block_refs_chain_by_parent_hash(anvil, client):
    anvil.rpc("anvil_mine", 3)
    tip = client.tip()
    refs = [client.block(h) for h in range(tip.height - 3, tip.height + 1)]

    assert refs[-1] == tip
    assert [r.parent_hash for r in refs[1:]] == [r.hash for r in refs[:-1]]
    assert all(r.time >= p.time for p, r in itertools.pairwise(refs))
    with pytest.raises(NodeError):
        client.block(tip.height + 1000)


def test_tip_follows_automining_and_evm_mine(anvil, client, new_address):
    before = client.tip().height
    receipt = anvil.wait_receipt(send(anvil, {"to": new_address(), "value": "0x1"}))
    assert client.tip().height == int(receipt["blockNumber"], 16) == before + 1
    anvil.rpc("evm_mine")
    assert client.tip().height == before + 2


def test_a_reorg_replaces_the_block_and_drops_its_transfer(anvil, client, ref_of, new_address):
    watched = new_address()
    receipt = anvil.wait_receipt(send(anvil, {"to": watched, "value": hex(10**15)}))
    old = ref_of(receipt)
    assert len(client.transfers_in_block(old, {watched})) == 1

    anvil.rpc("anvil_reorg", 1, [])  # the last block again, without its transactions

    new = client.block(old.height)
    assert (new.hash != old.hash, new.parent_hash) == (True, old.parent_hash)
    assert client.transfers_in_block(new, {watched}) == []
    with pytest.raises(NodeError):
        client.transfers_in_block(old, {watched})


def test_snapshot_and_revert_give_another_block_at_the_same_height(anvil, client, ref_of, new_address):
    watched = new_address()
    snapshot = anvil.rpc("evm_snapshot")
    old = ref_of(anvil.wait_receipt(send(anvil, {"to": watched, "value": hex(10**15)})))

    assert anvil.rpc("evm_revert", snapshot) is True
    replacement = anvil.wait_receipt(send(anvil, {"to": watched, "value": hex(2 * 10**15)}))

    new = ref_of(replacement)
    assert (new.height, new.parent_hash) == (old.height, old.parent_hash) and new.hash != old.hash
    assert [t.amount for t in client.transfers_in_block(new, {watched})] == [2 * 10**15]


def test_pending_transfers_are_none_on_ethereum(client, new_address):
    assert client.pending_transfers({new_address()}) == []


def test_addresses_are_normalized_to_lowercase_hex(client):
    checksummed = " 0xF39Fd6e51aad88F6F4ce6aB8827279cffFb92266 "
    assert client.normalize(checksummed) == "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266"


def test_balances_are_read_at_the_scanned_height_including_eth_sent_by_contracts(
    anvil, client, forwarder, ref_of, new_address
):
    watched, empty = new_address(), new_address()
    receipt = anvil.wait_receipt(forward_eth(anvil, forwarder, watched, 9))
    height = ref_of(receipt).height
    anvil.wait_receipt(send(anvil, {"to": watched, "value": "0x5"}))  # a later block: not at `height`
    assert client.balances([watched, empty], height) == {watched: 9, empty: 0}


def test_an_empty_log_answer_is_checked_against_the_blocks_bloom_and_receipts(anvil, tokens, new_address):
    watched = new_address()
    paid = anvil.wait_receipt(transfer_token(anvil, tokens["USDT"], watched, 5))
    plain = anvil.wait_receipt(send(anvil, {"to": new_address(), "value": "0x1"}))
    with FaultProxy(anvil.rpc_url) as proxy:

        def unknown_hash(call: dict) -> dict | None:  # a backend that has not got the block yet answers []
            if call.get("method") == "eth_getLogs" and "blockHash" in call["params"][0]:
                return {"jsonrpc": "2.0", "id": call["id"], "result": []}
            return None

        proxy.fault = per_call(proxy, unknown_hash)
        client = EthereumClient(proxy.url, timeout_s=10)
        found = client.transfers_in_block(client.block(int(paid["blockNumber"], 16)), {watched})
        asked = len(proxy.requests)
        assert client.transfers_in_block(client.block(int(plain["blockNumber"], 16)), {watched}) == []
        assert len(proxy.requests) - asked == 2  # its bloom holds no Transfer: [] is believed, no receipts asked
    assert [(t.address, t.token, t.amount) for t in found] == [(watched, tokens["USDT"], 5)]


def test_a_bloom_without_the_topic_says_so_and_a_missing_bloom_says_maybe():
    assert not bloom_may_hold("0x" + "00" * 256, TRANSFER_TOPIC)
    assert bloom_may_hold("0x" + "ff" * 256, TRANSFER_TOPIC)
    assert bloom_may_hold(None, TRANSFER_TOPIC)
