"""Block notifications from a node's ZMQ `hashblock` publisher (bitcoind -zmqpubhashblock)."""

import logging
from collections.abc import Callable

import eventlet
from eventlet.green import zmq

log = logging.getLogger(__name__)

RETRY_S = 5.0


def listen_for_blocks(url: str, on_block: Callable[[], None]) -> None:
    """Call `on_block` for every block the node announces, until the greenthread is killed.

    ZMQ reconnects by itself when the node restarts; announcements sent while
    disconnected are lost, which the scan loop's polling covers. A failure
    here never stops the watcher: it polls meanwhile and tries again.
    """
    while True:
        try:
            _subscribe(url, on_block)
        except zmq.ZMQError:
            log.warning("block notifications failed; polling meanwhile", extra={"url": url}, exc_info=True)
            eventlet.sleep(RETRY_S)


def _subscribe(url: str, on_block: Callable[[], None]) -> None:
    context = zmq.Context()
    socket = context.socket(zmq.SUB)
    try:
        socket.setsockopt(zmq.SUBSCRIBE, b"hashblock")
        socket.connect(url)
        while True:
            socket.recv_multipart()
            on_block()
    finally:
        socket.close(linger=0)
        context.term()
