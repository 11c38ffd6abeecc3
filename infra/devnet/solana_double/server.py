"""The double as an HTTP JSON-RPC server and a PubSub websocket, like a validator's RPC and PubSub ports."""

from __future__ import annotations

from typing import Any

from infra.devnet.served import JsonHandler, ServedDouble

from . import jsonrpc
from .ledger import Ledger
from .pubsub import PubSub
from .rpc import SolanaRpc


class _Handler(JsonHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.reply_json(200, self.server.app.handle(body))


class SolanaDouble(ServedDouble):
    """A Solana JSON-RPC node backed by LiteSVM on 127.0.0.1; a context manager.

    With `block_time_ms` it produces a block that often, as a cluster does;
    without, only when asked (`double_produceBlocks`). `port` 0 picks a free
    one, kept when `serve()` brings the API back after `stop_serving()`.
    """

    handler = _Handler

    def __init__(self, *, port: int = 0, block_time_ms: int | None = None, pubsub_port: int = 0):
        super().__init__(port=port, block_interval_s=block_time_ms / 1000 if block_time_ms else None)
        self.pubsub = PubSub(pubsub_port)
        self.rpc_handler = SolanaRpc(Ledger(on_slot=self.pubsub.slot))

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
