"""A node without the debug API, and a node that does not answer."""

import json
import secrets
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from prometheus_client import REGISTRY

from infra.devnet.nodes import free_port
from infra.devnet.tokens import forward_eth, send, transfer_token
from kernodeck_watchers.chains.base import NodeError, SeenTransfer
from kernodeck_watchers.chains.ethereum import EthereumClient

BLOCKS_WITHOUT_TRACES_TOTAL = "kernodeck_watcher_blocks_without_traces_total"


@pytest.fixture
def node_without_debug(anvil, request):
    """anvil behind a proxy that refuses debug_* with the error code `request.param`: -32601 as a node without
    the debug namespace, -32000 as one that cannot trace that block (pruned state, tracer timeout)."""
    asked = []

    def refuse(call):
        return {"jsonrpc": "2.0", "id": call["id"], "error": {"code": request.param, "message": "refused"}}

    def forward(call):
        request = urllib.request.Request(anvil.rpc_url, json.dumps(call).encode(), {"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as response:
            return json.loads(response.read())

    class Proxy(BaseHTTPRequestHandler):
        def do_POST(self):
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            calls = payload if isinstance(payload, list) else [payload]
            asked.extend(c["method"] for c in calls)
            answers = [refuse(c) if c["method"].startswith("debug_") else forward(c) for c in calls]
            body = json.dumps(answers if isinstance(payload, list) else answers[0]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", asked
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("node_without_debug", "trace_calls"), [(-32601, 1), (-32000, 2)], indirect=["node_without_debug"]
)
def test_without_traces_internal_transfers_are_counted_as_unseen_and_the_rest_is_found(
    anvil, tokens, forwarder, one_block, node_without_debug, trace_calls, new_address
):
    url, asked = node_without_debug
    network = f"ethereum-{secrets.token_hex(4)}"
    client = EthereumClient(url, network=network)
    watched = new_address()
    with one_block() as sent:
        sent.append(send(anvil, {"to": watched, "value": "0x7"}))
        sent.append(transfer_token(anvil, tokens["USDT"], watched, 8))
        sent.append(forward_eth(anvil, forwarder, watched, 9))
    ref = client.block(int(sent.receipts[0]["blockNumber"], 16))
    assert client.unseen == frozenset()  # until the node says it lacks the debug API

    first = client.transfers_in_block(ref, {watched})
    again = client.transfers_in_block(ref, {watched})

    log_index = int(sent.receipts[1]["logs"][0]["logIndex"], 16)
    assert first == [
        SeenTransfer(sent[0], 0, watched, None, 7),
        SeenTransfer(sent[1], log_index, watched, tokens["USDT"], 8),
    ]
    assert again == first
    # A node without the method: the status says so, the method is degraded. Failed traces: this block only.
    assert client.unseen == ({"internal_eth"} if trace_calls == 1 else set())
    assert asked.count("debug_traceBlockByHash") == trace_calls  # once only from a node that lacks the method
    assert REGISTRY.get_sample_value(BLOCKS_WITHOUT_TRACES_TOTAL, {"network": network}) == 2


def test_a_node_that_does_not_answer_is_a_node_error():
    client = EthereumClient(f"http://127.0.0.1:{free_port()}", timeout_s=2)
    with pytest.raises(NodeError):
        client.tip()


def test_credentials_in_the_url_go_in_an_authorization_header():
    client = EthereumClient("https://user:p%40ss@node.example:8545/rpc")
    assert client.rpc.url == "https://node.example:8545/rpc"
    assert client.rpc.headers["Authorization"] == "Basic dXNlcjpwQHNz"  # user:p@ss
