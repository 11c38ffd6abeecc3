"""Matching of node answers, on the field shapes geth and anvil send (hex strings, nulls, odd logs)."""

import pytest

from kernodeck_watchers.chains.base import SeenTransfer
from kernodeck_watchers.chains.ethereum import (
    TRANSFER_TOPIC,
    BlockContents,
    internal_transfers,
    match_block,
    native_transfers,
    token_transfers,
)

pytestmark = pytest.mark.unit

W = "0x" + "ab" * 20
TOKEN = "0x" + "cd" * 20
TX = "0x" + "11" * 32


def topic(address: str) -> str:
    return "0x" + address[2:].rjust(64, "0")


def transfer_log(**changes) -> dict:
    entry = {
        "address": TOKEN.upper().replace("0X", "0x"),
        "topics": [TRANSFER_TOPIC, topic("0x" + "01" * 20), topic(W)],
        "data": "0x" + hex(10**6)[2:].rjust(64, "0"),
        "transactionHash": TX,
        "logIndex": "0x1f",
        "removed": False,
    }
    return entry | changes


def test_the_transfer_topic_is_spelled_as_the_json_rpc_does():
    assert TRANSFER_TOPIC == "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"


def test_native_transfers_skip_contract_creation_zero_value_and_other_addresses():
    txs = [
        {"hash": "0x01", "to": None, "value": "0x5"},  # contract creation
        {"hash": "0x02", "to": W, "value": "0x0"},
        {"hash": "0x03", "to": "0x" + "ef" * 20, "value": "0x5"},
        {"hash": "0x04", "to": W.upper().replace("0X", "0x"), "value": "0x56bc75e2d63100000"},  # 100 ETH, over 64 bits
    ]
    assert native_transfers(txs, {W}) == [SeenTransfer("0x04", 0, W, None, 100 * 10**18)]


def test_a_standard_transfer_log_is_matched_with_its_lowercased_contract():
    assert token_transfers([transfer_log()], {W}) == [SeenTransfer(TX, 31, W, TOKEN, 10**6)]


def test_addresses_match_in_lower_case_whatever_case_the_node_writes_their_hex_in():
    digits = "0x" + "12" * 20  # no letter: nothing to lower
    upper = topic(W).upper().replace("0X", "0x")
    logs = [
        transfer_log(topics=[TRANSFER_TOPIC, topic(digits), upper]),
        transfer_log(topics=[TRANSFER_TOPIC, topic(W), topic(digits)]),
    ]
    assert token_transfers(logs, {W, digits}) == [
        SeenTransfer(TX, 31, W, TOKEN, 10**6),
        SeenTransfer(TX, 31, digits, TOKEN, 10**6),
    ]
    assert token_transfers(logs, {W.upper().replace("0X", "0x")}) == []  # the watched spelling is lower case
    checksummed = "0x" + "aB" * 20
    assert native_transfers([{"hash": TX, "to": checksummed, "value": "0x1"}], {W}) == [SeenTransfer(TX, 0, W, None, 1)]
    assert internal_transfers(TX, frame("0x01", calls=[frame(checksummed, 5)]), {W}) == [
        SeenTransfer(TX, -1, W, None, 5)
    ]


def test_transfer_logs_that_are_not_erc20_transfers_are_ignored():
    sender, to = topic("0x" + "01" * 20), topic(W)
    odd = [
        transfer_log(topics=[TRANSFER_TOPIC, sender, to, topic("0x07")], data="0x"),  # ERC-721: tokenId indexed
        transfer_log(topics=[TRANSFER_TOPIC], data="0x" + "00" * 64 + hex(5)[2:].rjust(64, "0")),  # nothing indexed
        transfer_log(topics=[TRANSFER_TOPIC, sender]),
        transfer_log(topics=["0x" + "00" * 32, sender, to]),  # another event
        transfer_log(topics=[TRANSFER_TOPIC, sender, "0x" + "ff" * 12 + W[2:]]),  # not an address
        transfer_log(data="0x" + "00" * 64),  # zero
        transfer_log(data="0x" + "00" * 31 + "05" + "00" * 32),  # more than one word
        transfer_log(removed=True),
    ]
    assert token_transfers(odd, {W}) == []


def frame(to: str, value: int = 0, calls=(), **extra) -> dict:
    return {"type": "CALL", "from": "0x" + "99" * 20, "to": to, "value": hex(value), "calls": list(calls), **extra}


def test_internal_transfers_are_numbered_by_preorder_position_and_reverted_subtrees_skipped():
    other = "0x" + "ee" * 20
    root = frame(
        other,
        7,
        [
            frame(W, 1),  # 1
            frame(other, 0, [frame(W, 2), frame(W, 3, error="execution reverted")]),  # 2, 3, 4
            frame(other, 0, [frame(W, 4)], error="execution reverted"),  # 5, 6: undone by its parent's revert
            {"type": "DELEGATECALL", "to": W, "value": "0x9"},  # 7: the caller's value, not a transfer
            {"type": "STATICCALL", "to": W},  # 8
            {"type": "SELFDESTRUCT", "to": W, "value": "0x8"},  # 9
        ],
    )
    assert internal_transfers(TX, root, {W}) == [
        SeenTransfer(TX, -1, W, None, 1),
        SeenTransfer(TX, -3, W, None, 2),
        SeenTransfer(TX, -9, W, None, 8),
    ]
    assert internal_transfers(TX, frame(W, 5), {W}) == []  # the transaction itself is not internal


def test_a_failed_transaction_has_no_internal_transfers():
    assert internal_transfers(TX, frame("0x" + "ee" * 20, 1, [frame(W, 1)], error="out of gas"), {W}) == []


def test_a_deep_call_tree_is_walked_without_recursion():
    root = leaf = frame(W, 0)
    for _ in range(3000):
        child = frame(W, 1)
        leaf["calls"] = [child]
        leaf = child
    assert len(internal_transfers(TX, root, {W})) == 3000


def test_traces_without_tx_hash_take_the_transaction_in_the_same_position():
    contents = BlockContents(
        transactions=[{"hash": "0xaa", "to": None, "value": "0x0"}, {"hash": "0xbb", "to": None, "value": "0x0"}],
        logs=[],
        traces=[{"result": frame(W, 0)}, {"result": frame(TOKEN, 0, [frame(W, 2)])}],
    )
    assert match_block(contents, {W}) == [SeenTransfer("0xbb", -1, W, None, 2)]
