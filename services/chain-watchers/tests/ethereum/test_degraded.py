"""A node without the tracing APIs or failing them, and a node that does not answer."""

import json
import secrets

import pytest
from prometheus_client import REGISTRY

from infra.devnet.fault_proxy import FaultProxy, per_call
from infra.devnet.nodes import free_port
from infra.devnet.tokens import forward_eth, send, transfer_token
from kernodeck_watchers.chains.base import NodeError, SeenTransfer
from kernodeck_watchers.chains.ethereum import EthereumClient

BLOCKS_WITHOUT_TRACES_TOTAL = "kernodeck_watcher_blocks_without_traces_total"


@pytest.fixture
def answering(anvil):
    """`answering(reply_to)` -> a proxy in front of anvil that answers each call with `reply_to(call)` (None: the
    call forwarded as it is), stopped after the test."""
    proxies = []

    def start(reply_to) -> FaultProxy:
        proxy = FaultProxy(anvil.rpc_url).start()
        proxy.fault = per_call(proxy, reply_to)
        proxies.append(proxy)
        return proxy

    yield start
    for proxy in proxies:
        proxy.stop()


@pytest.fixture
def refusing(answering):
    """`refusing(code, *prefixes)` -> (url, methods asked): anvil behind a proxy that answers the calls of these
    method prefixes with error `code`: -32601 as a node without them, -32000 as one that cannot trace that block."""

    def start(code: int, *prefixes: str) -> tuple[str, list[str]]:
        asked: list[str] = []

        def reply_to(call: dict) -> dict | None:
            asked.append(call["method"])
            if call["method"].startswith(prefixes):
                return {"jsonrpc": "2.0", "id": call["id"], "error": {"code": code, "message": "refused"}}
            return None

        return answering(reply_to).url, asked

    return start


def paid_three_ways(anvil, tokens, forwarder, one_block, watched):
    """ETH, USDT and ETH sent by a contract to `watched` in one block; (sent, the block's height)."""
    with one_block() as sent:
        sent.append(send(anvil, {"to": watched, "value": "0x7"}))
        sent.append(transfer_token(anvil, tokens["USDT"], watched, 8))
        sent.append(forward_eth(anvil, forwarder, watched, 9))
    return sent, int(sent.receipts[0]["blockNumber"], 16)


def direct(sent, tokens, watched) -> list[SeenTransfer]:
    log_index = int(sent.receipts[1]["logs"][0]["logIndex"], 16)
    return [SeenTransfer(sent[0], 0, watched, None, 7), SeenTransfer(sent[1], log_index, watched, tokens["USDT"], 8)]


def test_without_debug_traces_trace_block_finds_internal_transfers_at_the_same_index(
    anvil, tokens, forwarder, one_block, refusing, new_address, client
):
    url, asked = refusing(-32601, "debug_")
    without_debug = EthereumClient(url, network=f"ethereum-{secrets.token_hex(4)}")
    watched = new_address()
    sent, height = paid_three_ways(anvil, tokens, forwarder, one_block, watched)

    found = without_debug.transfers_in_block(without_debug.block(height), {watched})

    assert found == client.transfers_in_block(client.block(height), {watched})  # anvil's own debug traces
    assert [t for t in found if t.index < 0] == [SeenTransfer(sent[2], -1, watched, None, 9)]
    assert without_debug.unseen == frozenset()
    without_debug.transfers_in_block(without_debug.block(height), {watched})
    assert asked.count("debug_traceBlockByHash") == 1  # not asked again


def test_without_any_tracing_api_internal_transfers_are_unseen_and_the_rest_is_found(
    anvil, tokens, forwarder, one_block, refusing, new_address
):
    url, asked = refusing(-32601, "debug_", "trace_")
    network = f"ethereum-{secrets.token_hex(4)}"
    client = EthereumClient(url, network=network)
    watched = new_address()
    sent, height = paid_three_ways(anvil, tokens, forwarder, one_block, watched)
    assert client.unseen == frozenset()  # until the node says it lacks them

    first = client.transfers_in_block(client.block(height), {watched})
    again = client.transfers_in_block(client.block(height), {watched})

    assert first == again == direct(sent, tokens, watched)
    assert client.unseen == {"internal_eth"}  # the status says so: the method is degraded
    assert (asked.count("debug_traceBlockByHash"), asked.count("trace_block")) == (1, 1)
    assert REGISTRY.get_sample_value(BLOCKS_WITHOUT_TRACES_TOTAL, {"network": network}) == 2


def test_failed_traces_are_retried_for_a_while_then_the_block_goes_without(
    anvil, tokens, forwarder, one_block, refusing, new_address
):
    url, _ = refusing(-32000, "debug_")  # pruned state, a tracer timeout: this block only
    watched = new_address()
    sent, height = paid_three_ways(anvil, tokens, forwarder, one_block, watched)
    patient = EthereumClient(url, trace_retry_s=60)
    with pytest.raises(NodeError):  # the pass stops at the block; the next one reads it again
        patient.transfers_in_block(patient.block(height), {watched})
    assert patient.unseen == frozenset()
    given_up = EthereumClient(url, trace_retry_s=0)
    assert given_up.transfers_in_block(given_up.block(height), {watched}) == direct(sent, tokens, watched)


@pytest.fixture
def tracing_fails(answering):
    """`tracing_fails(fail)` -> (url, calls asked): anvil behind a proxy whose debug_traceBlockByHash answers are
    passed through `fail(call, answer)` (None: the call forwarded as it is)."""

    def start(fail) -> tuple[str, list[dict]]:
        asked: list[dict] = []

        def reply_to(call: dict) -> dict | None:
            asked.append(call)
            if call["method"] != "debug_traceBlockByHash":
                return None
            forwarded = proxy.forward("/", json.dumps(call).encode(), {"Content-Type": "application/json"})
            return fail(call, json.loads(forwarded.body))

        proxy = answering(reply_to)
        return proxy.url, asked

    return start


def scanned_twice(url, asked, height, watched) -> tuple[list[SeenTransfer], list[tuple]]:
    """A client scans the block at `height`, fails on its traces, and scans it again as the next pass would: what
    the second scan finds, and the (method, params) it asked the node."""
    client = EthereumClient(url, trace_retry_s=60)
    with pytest.raises(NodeError):  # the pass stops at the block
        client.transfers_in_block(client.block(height), {watched})
    first = len(asked)
    found = client.transfers_in_block(client.block(height), {watched})
    return found, [(call["method"], call["params"]) for call in asked[first:]]


def test_a_failed_transaction_trace_is_retried_alone_without_reading_the_block_again(
    anvil, tokens, forwarder, one_block, tracing_fails, new_address, client
):
    watched = new_address()
    failed = []

    def one_trace_times_out(call, answer):
        if not failed:
            failed.append(call)
            traces = answer["result"]
            traces[2] = {"txHash": traces[2]["txHash"], "error": "execution timeout"}  # the forwarder's transaction
        return answer

    url, asked = tracing_fails(one_trace_times_out)
    sent, height = paid_three_ways(anvil, tokens, forwarder, one_block, watched)

    found, retry = scanned_twice(url, asked, height, watched)

    assert found == client.transfers_in_block(client.block(height), {watched})  # the internal transfer too
    assert retry == [
        ("eth_getBlockByNumber", [hex(height), False]),  # the block's hash checked, not the block read again
        ("debug_traceTransaction", [sent[2], {"tracer": "callTracer"}]),  # the failed transaction alone
        ("eth_getTransactionReceipt", [sent[0]]),
    ]


def test_a_failed_block_trace_is_asked_again_alone(anvil, tokens, forwarder, one_block, tracing_fails, new_address):
    watched = new_address()
    failed = []

    def fails_once(call, answer):
        if failed:
            return answer
        failed.append(call)
        return {"jsonrpc": "2.0", "id": call["id"], "error": {"code": -32000, "message": "execution timeout"}}

    url, asked = tracing_fails(fails_once)
    sent, height = paid_three_ways(anvil, tokens, forwarder, one_block, watched)

    found, retry = scanned_twice(url, asked, height, watched)

    assert [t for t in found if t.index < 0] == [SeenTransfer(sent[2], -1, watched, None, 9)]
    assert [method for method, _ in retry] == [
        "eth_getBlockByNumber",  # the hash only
        "debug_traceBlockByHash",  # the trace call alone: not eth_getLogs
        "eth_getTransactionReceipt",
    ]
    assert retry[0][1] == [hex(height), False]


def test_a_node_that_does_not_answer_is_a_node_error():
    client = EthereumClient(f"http://127.0.0.1:{free_port()}", timeout_s=2)
    with pytest.raises(NodeError):
        client.tip()


def test_credentials_in_the_url_go_in_an_authorization_header():
    client = EthereumClient("https://user:p%40ss@node.example:8545/rpc")
    assert client.rpc.url == "https://node.example:8545/rpc"
    assert client.rpc.headers["Authorization"] == "Basic dXNlcjpwQHNz"  # user:p@ss
