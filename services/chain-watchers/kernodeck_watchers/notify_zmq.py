"""Blocks from a node's ZMQ publisher: bitcoind's `hashblock` (-zmqpubhashblock), java-tron's `block` (its
built-in message queue, TIP-28)."""

from collections.abc import Callable

from eventlet.green import zmq


def listen(url: str, on_block: Callable[[], None], topic: bytes) -> None:
    """Call `on_block` for every announcement; ZMQ reconnects by itself when the node restarts."""
    context = zmq.Context()
    socket = context.socket(zmq.SUB)
    try:
        socket.setsockopt(zmq.SUBSCRIBE, topic)
        socket.connect(url)
        while True:
            socket.recv_multipart()
            on_block()
    finally:
        socket.close(linger=0)
        context.term()
