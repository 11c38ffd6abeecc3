"""Blocks from an Ethereum node's `eth_subscribe` `newHeads` over websocket (plain sockets, green under eventlet)."""

import json
from collections.abc import Callable

import websocket

CONNECT_TIMEOUT_S = 10.0
SUBSCRIBE = {"jsonrpc": "2.0", "id": 1, "method": "eth_subscribe", "params": ["newHeads"]}


class SubscriptionRefused(RuntimeError):
    """The node answered eth_subscribe with an error."""


def listen(url: str, on_block: Callable[[], None]) -> None:
    """Call `on_block` for every new head; returns only by raising, when the connection or subscription fails."""
    ws = websocket.create_connection(url, timeout=CONNECT_TIMEOUT_S)
    try:
        ws.send(json.dumps(SUBSCRIBE))
        # Blocks come when they come (never, on an idle devnet): no read timeout. A dead peer is
        # found by TCP keepalive, which websocket-client turns on.
        ws.settimeout(None)
        while message := ws.recv():
            reply = json.loads(message)
            if reply.get("method") == "eth_subscription" or (reply.get("id") == SUBSCRIBE["id"] and "result" in reply):
                on_block()  # the subscription's confirmation too: blocks may have come while disconnected
            elif "error" in reply:
                raise SubscriptionRefused(reply["error"])
        raise websocket.WebSocketConnectionClosedException("the node closed the connection")
    finally:
        ws.shutdown()
