"""The watchers' HTTP connections to their nodes are kept between calls: a real HTTP/1.1 server on loopback
counts the connections it accepted. A connection the server closed while idle is replaced without a failed
call; a server that closes after each answer (HTTP/1.0) is still answered."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kernodeck_watchers.chains.base import NodeError, Throttled
from kernodeck_watchers.chains.http_pool import HttpPool
from kernodeck_watchers.chains.jsonrpc import JsonRpc, post_json


class Node(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, protocol: str = "HTTP/1.1", status: int = 200):
        self.connections = 0
        self.status = status
        self.handlers: list[BaseHTTPRequestHandler] = []
        node = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = protocol

            def setup(self):
                super().setup()
                node.connections += 1
                node.handlers.append(self)

            def do_POST(self):
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": request["method"]}).encode()
                self.send_response(node.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                if node.status == 429:
                    self.send_header("Retry-After", "7")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://user:secret@127.0.0.1:{self.server_address[1]}/"

    def close_idle_connections(self) -> None:
        for handler in self.handlers:
            handler.close_connection = True
            handler.connection.shutdown(2)
        self.handlers.clear()


@pytest.fixture
def node():
    server = Node()
    yield server
    server.shutdown()
    server.server_close()


def test_many_calls_share_one_connection(node):
    rpc = JsonRpc(node.url, timeout_s=5)
    assert [rpc.call("eth_blockNumber") for _ in range(50)] == ["eth_blockNumber"] * 50
    assert node.connections == 1


def test_a_connection_the_node_closed_while_idle_is_replaced_without_a_failed_call(node):
    rpc = JsonRpc(node.url, timeout_s=5)
    assert rpc.call("first") == "first"
    node.close_idle_connections()
    assert rpc.call("second") == "second"
    assert node.connections == 2


def test_a_node_that_closes_after_each_answer_is_still_answered():
    server = Node(protocol="HTTP/1.0")
    try:
        rpc = JsonRpc(server.url, timeout_s=5)
        assert [rpc.call("x") for _ in range(3)] == ["x"] * 3
        assert server.connections == 3
    finally:
        server.shutdown()
        server.server_close()


def test_throttling_is_read_from_a_kept_connection():
    server = Node(status=429)
    try:
        with pytest.raises(Throttled) as raised:
            post_json(server.url.replace("user:secret@", ""), {"id": 1, "method": "m"}, 5, {}, "m")
        assert raised.value.retry_after_s == 7
    finally:
        server.shutdown()
        server.server_close()


def test_a_node_away_is_a_node_error_that_names_no_url():
    pool = HttpPool()
    with pytest.raises(ConnectionRefusedError):
        pool.post("http://127.0.0.1:9/key-in-path", b"{}", {}, 1)
    with pytest.raises(NodeError) as raised:
        JsonRpc("http://127.0.0.1:9/key-in-path", timeout_s=1).call("eth_blockNumber")
    assert "key-in-path" not in str(raised.value)


def test_idle_connections_are_bounded(node):
    pool = HttpPool(idle_per_origin=2)
    url = node.url.replace("user:secret@", "")
    held = [pool._open(("http", "127.0.0.1", node.server_address[1]), 5) for _ in range(4)]
    for connection in held:
        pool._exchange(("http", "127.0.0.1", node.server_address[1]), connection, "/", b'{"id":1,"method":"m"}', {}, 5)
    assert len(pool._idle[("http", "127.0.0.1", node.server_address[1])]) == 2
    pool.post(url, b'{"id":2,"method":"m"}', {}, 5)
    assert pool.opened == 4
    pool.close()
