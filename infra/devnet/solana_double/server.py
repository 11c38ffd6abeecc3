"""The double as an HTTP JSON-RPC server, like a validator's RPC port."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import jsonrpc
from .ledger import Ledger
from .rpc import SolanaRpc


class SolanaDouble:
    """A Solana JSON-RPC node backed by LiteSVM; a context manager.

    With `block_time_ms` it produces a block that often, as a cluster does;
    without, only when asked (`double_produceBlocks`). `confirmed_depth` and
    `finalized_depth` are how many blocks `confirmed` and `finalized` trail
    the newest block. `port` 0 picks a free one, kept when `serve()` brings
    the API back after `stop_serving()`.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        block_time_ms: int | None = None,
        confirmed_depth: int = 1,
        finalized_depth: int = 31,
    ):
        self.rpc_handler = SolanaRpc(Ledger(confirmed_depth=confirmed_depth, finalized_depth=finalized_depth))
        self._address = (host, port)
        self._block_time_ms = block_time_ms
        self._server: _Server | None = None
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        host, port = self._address
        if not port:
            raise RuntimeError("the double is not started")
        return f"http://{host}:{port}"

    def rpc(self, method: str, *params: Any) -> Any:
        """Call a method over HTTP, as any client would; raises jsonrpc.RpcError on an error reply."""
        return jsonrpc.call(self.url, method, *params)

    def start(self) -> SolanaDouble:
        self.serve()
        if self._block_time_ms:
            self._spawn(self._produce_forever)
        return self

    def serve(self) -> SolanaDouble:
        """Serve the JSON-RPC API: at start, and again (same port, same ledger) after `stop_serving()`."""
        self._server = _Server(self._address, self.rpc_handler)
        self._address = self._server.server_address[:2]
        # a short poll interval so that stop() returns at once, not after the default half second
        self._spawn(self._server.serve_forever, 0.01)
        return self

    def stop_serving(self) -> None:
        """Take the API away, as a node that is down; the ledger stays, and goes on producing blocks."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def stop(self) -> None:
        self._stopping.set()
        self.stop_serving()
        for thread in self._threads:
            thread.join()

    def _spawn(self, target, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def __enter__(self) -> SolanaDouble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _produce_forever(self) -> None:
        while not self._stopping.wait(self._block_time_ms / 1000):
            self.rpc_handler.call("double_produceBlocks", [1])


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], rpc_handler: SolanaRpc):
        super().__init__(address, _Handler)
        self.rpc_handler = rpc_handler


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        reply = json.dumps(self.server.rpc_handler.handle(body)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a test run makes thousands of calls."""
