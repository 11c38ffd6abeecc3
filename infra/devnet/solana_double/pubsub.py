"""A validator's PubSub websocket (agave serves it on the RPC port + 1), the slot subscription only:
`slotSubscribe` answers a subscription id, then every block the ledger produces goes out as a
`slotNotification` `{"parent", "root", "slot"}`; `slotUnsubscribe` ends it. Other methods: "Method not found"."""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.server import Server, ServerConnection, serve

from .jsonrpc import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR


class PubSub:
    def __init__(self, port: int = 0):
        self.port = port
        self._server: Server | None = None
        self._subscribers: dict[int, ServerConnection] = {}
        self._ids = itertools.count()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def bind(self) -> Server:
        """Listen (on the same port again after `shutdown()`); the server, to `serve_forever()` in a thread."""
        self._server = serve(self._handle, "127.0.0.1", self.port, compression=None)
        self.port = self._server.socket.getsockname()[1]
        return self._server

    def shutdown(self) -> None:
        """Close every connection, as a node that goes down."""
        if self._server is not None:
            self._server.shutdown()
            self._server = None
        with self._lock:
            self._subscribers.clear()

    def slot(self, slot: int, parent: int, root: int) -> None:
        """Notify every subscriber of a produced slot."""
        with self._lock:
            for subscription, connection in list(self._subscribers.items()):
                notification = {"parent": parent, "root": root, "slot": slot}
                message = {"subscription": subscription, "result": notification}
                try:
                    connection.send(json.dumps({"jsonrpc": "2.0", "method": "slotNotification", "params": message}))
                except ConnectionClosed:
                    del self._subscribers[subscription]

    def _handle(self, connection: ServerConnection) -> None:
        mine: set[int] = set()
        try:
            for message in connection:
                connection.send(json.dumps(self._answer(message, connection, mine)))
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                for subscription in mine:
                    self._subscribers.pop(subscription, None)

    def _answer(self, message: str | bytes, connection: ServerConnection, mine: set[int]) -> dict:
        try:
            request = json.loads(message)
        except ValueError:
            return _error(None, PARSE_ERROR, "Parse error")
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return _error(None, INVALID_REQUEST, "Invalid request")
        method, request_id = request["method"], request.get("id")
        with self._lock:
            if method == "slotSubscribe":
                subscription = next(self._ids)
                self._subscribers[subscription] = connection
                mine.add(subscription)
                return {"jsonrpc": "2.0", "result": subscription, "id": request_id}
            if method == "slotUnsubscribe":
                params = request.get("params") or [None]
                if params[0] not in mine:
                    return _error(request_id, INVALID_PARAMS, "Invalid subscription id.")
                mine.discard(params[0])
                self._subscribers.pop(params[0], None)
                return {"jsonrpc": "2.0", "result": True, "id": request_id}
        return _error(request_id, METHOD_NOT_FOUND, "Method not found")


def _error(request_id: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message}, "id": request_id}
