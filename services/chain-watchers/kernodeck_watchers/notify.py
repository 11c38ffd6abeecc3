"""Block notifications: the node announces each new block and the scan loop wakes at once.

The URL's scheme picks the listener: `tcp://` or `ipc://` is a bitcoind ZMQ
`hashblock` publisher (notify_zmq), `ws://` or `wss://` an Ethereum node's
`eth_subscribe` `newHeads` (notify_ws). Blocks announced while a listener is
disconnected are lost; the scan loop's polling covers them.
"""

import logging
from collections.abc import Callable
from urllib.parse import urlsplit

import eventlet

from kernodeck_watchers import metrics, notify_ws, notify_zmq

log = logging.getLogger(__name__)

RETRY_S = 5.0
LISTENERS = {"tcp": notify_zmq.listen, "ipc": notify_zmq.listen, "ws": notify_ws.listen, "wss": notify_ws.listen}


def listen_for_blocks(url: str, on_block: Callable[[], None]) -> None:
    """Call `on_block` for every block the node announces, until the greenthread is killed.

    A failure never stops the watcher: it logs, polls meanwhile, and connects
    and subscribes again after RETRY_S.
    """
    scheme = urlsplit(url).scheme
    listen = LISTENERS.get(scheme)
    if listen is None:
        log.warning("no block notifications from this kind of URL; polling only", extra={"url": _where(url)})
        return

    def announced() -> None:
        metrics.BLOCK_NOTIFICATIONS.labels(scheme).inc()
        on_block()

    while True:
        try:
            listen(url, announced)
        except Exception:
            metrics.NOTIFY_FAILURES.labels(scheme).inc()
            log.warning("block notifications failed; polling meanwhile", extra={"url": _where(url)}, exc_info=True)
        eventlet.sleep(RETRY_S)


def _where(url: str) -> str:
    """Scheme, host and port only: a provider's URL may carry an API key in its path or query."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
