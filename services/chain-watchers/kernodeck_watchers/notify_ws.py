"""Blocks from a node's JSON-RPC subscription over websocket (plain sockets, green under eventlet): an Ethereum
node's `eth_subscribe` `newHeads`, a Solana node's `slotSubscribe` (its PubSub port, the RPC port + 1 on agave)."""

import json
from collections.abc import Callable
from dataclasses import dataclass

import websocket

CONNECT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Subscription:
    method: str
    params: tuple
    notification: str  # the method of the node's notifications

    def request(self) -> dict:
        return {"jsonrpc": "2.0", "id": 1, "method": self.method, "params": list(self.params)}


SUBSCRIPTIONS = {
    "ethereum": Subscription("eth_subscribe", ("newHeads",), "eth_subscription"),
    # Every slot as the node processes it; the watcher then reads its own commitment's tip.
    "solana": Subscription("slotSubscribe", (), "slotNotification"),
}


class SubscriptionRefused(RuntimeError):
    """The node answered the subscription request with an error."""


def listen(url: str, on_block: Callable[[], None], subscription: Subscription) -> None:
    """Call `on_block` for every notification; returns only by raising, when the connection or subscription fails."""
    ws = websocket.create_connection(url, timeout=CONNECT_TIMEOUT_S)
    try:
        request = subscription.request()
        ws.send(json.dumps(request))
        # Blocks come when they come (never, on an idle devnet): no read timeout. A dead peer is
        # found by TCP keepalive, which websocket-client turns on.
        ws.settimeout(None)
        while message := ws.recv():
            reply = json.loads(message)
            if reply.get("method") == subscription.notification or (
                reply.get("id") == request["id"] and "result" in reply
            ):
                on_block()  # the subscription's confirmation too: blocks may have come while disconnected
            elif "error" in reply:
                raise SubscriptionRefused(reply["error"])
        raise websocket.WebSocketConnectionClosedException("the node closed the connection")
    finally:
        ws.shutdown()
