"""The double as an HTTP JSON-RPC server and a PubSub websocket, like a validator's RPC and PubSub ports."""

from __future__ import annotations

import gzip
import json
from typing import Any

from infra.devnet.served import JsonHandler, ServedDouble

from . import jsonrpc
from .ledger import Ledger
from .pubsub import PubSub
from .rpc import SolanaRpc
from .traffic import Traffic

GZIP_LEVEL = 1  # the double shares its machine with the client measured: the cheapest level


class _Handler(JsonHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        answer = self.server.app.handle(body)
        if not accepts_gzip(self.headers.get("Accept-Encoding", "")):
            self.reply_json(200, answer)
            return
        # What RPC providers' front ends do for a client that asks: a mainnet block's JSON shrinks about tenfold.
        data = gzip.compress(json.dumps(answer).encode(), compresslevel=GZIP_LEVEL)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def accepts_gzip(accept_encoding: str) -> bool:
    """Whether an Accept-Encoding header admits gzip (`gzip`, `gzip;q=0.5`, `*`; not `gzip;q=0`)."""
    for coding in accept_encoding.split(","):
        name, _, weight = coding.strip().partition(";")
        if name.strip().lower() in ("gzip", "*"):
            return weight.replace(" ", "").lower() not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


class SolanaDouble(ServedDouble):
    """A Solana JSON-RPC node backed by LiteSVM on 127.0.0.1; a context manager.

    With `block_time_ms` it produces a block that often, as a cluster does;
    without, only when asked (`double_produceBlocks`). With `traffic`, every
    block is of mainnet size (traffic.py). It answers gzip-compressed to a
    client whose Accept-Encoding admits it. `port` 0 picks a free
    one, kept when `serve()` brings the API back after `stop_serving()`.
    """

    handler = _Handler

    def __init__(
        self, *, port: int = 0, block_time_ms: int | None = None, pubsub_port: int = 0, traffic: Traffic | None = None
    ):
        super().__init__(port=port, block_interval_s=block_time_ms / 1000 if block_time_ms else None)
        self.pubsub = PubSub(pubsub_port)
        self.rpc_handler = SolanaRpc(Ledger(on_slot=self.pubsub.slot, traffic=traffic))

    @property
    def ws_url(self) -> str:
        """The PubSub websocket: `slotSubscribe`."""
        return self.pubsub.url

    def serve(self) -> SolanaDouble:
        """The RPC and PubSub ports: at start, and again (same ports) after `stop_serving()`."""
        self._spawn(self.pubsub.bind().serve_forever)
        return super().serve()

    def stop_serving(self) -> None:
        super().stop_serving()
        self.pubsub.shutdown()

    def rpc(self, method: str, *params: Any) -> Any:
        """Call a method over HTTP, as any client would; raises jsonrpc.RpcError on an error reply."""
        return jsonrpc.call(self.url, method, *params)

    def app(self) -> SolanaRpc:
        return self.rpc_handler

    def produce_block(self) -> None:
        self.rpc_handler.call("double_produceBlocks", [1])
