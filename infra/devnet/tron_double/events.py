"""java-tron's built-in message queue (TIP-28, `event.subscribe.native.useNativeQueue`): a ZeroMQ PUB socket
on which every new block goes out as two frames, the topic `block` and its BlockLogTrigger as JSON."""

import json

import zmq

TOPIC = b"block"  # java-tron's default `topic` for the `block` trigger


class BlockPublisher:
    """Binds on 127.0.0.1:`port` (0: a free one, kept by `bind()` after `close()`); `publish` is called under the
    chain's lock, so one thread at a time uses the socket."""

    def __init__(self, port: int = 0):
        self.port = port
        self._context = zmq.Context.instance()
        self._socket: zmq.Socket | None = None

    @property
    def url(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def bind(self) -> None:
        self._socket = self._context.socket(zmq.PUB)
        self._socket.setsockopt(zmq.LINGER, 0)
        if self.port:
            self._socket.bind(self.url)
        else:
            self.port = self._socket.bind_to_random_port("tcp://127.0.0.1")

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def publish(self, block: dict, solid_height: int) -> None:
        """The BlockLogTrigger of a block in the node API's JSON form (no-op while the node is down)."""
        if self._socket is None:
            return
        header = block["block_header"]["raw_data"]
        trigger = {
            "timeStamp": header.get("timestamp", 0),
            "triggerName": "blockTrigger",
            "blockNumber": header.get("number", 0),
            "blockHash": block["blockID"],
            "transactionSize": len(block.get("transactions", [])),
            "latestSolidifiedBlockNumber": solid_height,
            "transactionList": [tx["txID"] for tx in block.get("transactions", [])],
        }
        self._socket.send_multipart([TOPIC, json.dumps(trigger).encode()])
