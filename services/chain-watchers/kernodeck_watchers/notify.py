"""Block notifications: the node announces each new block and the scan loop wakes at once.

Where the settings name a notification URL, its scheme picks the listener:
`tcp://` or `ipc://` is a ZMQ publisher (notify_zmq: bitcoind's `hashblock`,
java-tron's `block`), `ws://` or `wss://` a JSON-RPC websocket subscription
(notify_ws: an Ethereum node's `newHeads`, Solana's `slotSubscribe`). A
Bitcoin or Litecoin watcher without a ZMQ URL long-polls the node's RPC
instead (notify_longpoll). Blocks announced while a listener is
disconnected are lost; the scan loop's polling covers them.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from urllib.parse import urlsplit

import eventlet

from kernodeck_watchers import metrics, notify_longpoll, notify_ws, notify_zmq
from kernodeck_watchers.clients import utxo_rpc
from kernodeck_watchers.config import WatcherSettings

log = logging.getLogger(__name__)

RETRY_S = 5.0
LONG_POLLED = ("bitcoin", "litecoin")
ZMQ_TOPICS = {"bitcoin": b"hashblock", "litecoin": b"hashblock", "tron": b"block"}

Listen = Callable[[Callable[[], None]], None]  # listen(on_block): returns only by raising


@dataclass(frozen=True)
class BlockSource:
    url: str  # where the announcements come from; only its scheme, host and port are ever logged
    listen: Listen

    @property
    def scheme(self) -> str:
        return urlsplit(self.url).scheme


def block_source(settings: WatcherSettings) -> BlockSource | None:
    """Where this watcher hears of new blocks; None: polling only."""
    network, url = settings.network, settings.block_notify_url
    if url:
        scheme = urlsplit(url).scheme
        if scheme in ("tcp", "ipc") and network in ZMQ_TOPICS:
            return BlockSource(url, partial(notify_zmq.listen, url, topic=ZMQ_TOPICS[network]))
        if scheme in ("ws", "wss") and network in notify_ws.SUBSCRIPTIONS:
            return BlockSource(url, partial(notify_ws.listen, url, subscription=notify_ws.SUBSCRIPTIONS[network]))
        log.warning("no block notifications from this kind of URL; polling only", extra={"url": _where(url)})
        return None
    if network in LONG_POLLED:
        rpc = utxo_rpc(settings, notify_longpoll.WAIT_MS / 1000 + settings.rpc_timeout_s)
        return BlockSource(rpc.url, partial(notify_longpoll.listen, rpc))
    return None


def listen_for_blocks(source: BlockSource, on_block: Callable[[], None]) -> None:
    """Call `on_block` for every block the node announces, until the greenthread is killed.

    A failure never stops the watcher: it logs, polls meanwhile, and connects
    and subscribes again after RETRY_S. A node that refuses the long poll leaves it polling for good.
    """
    scheme = source.scheme

    def announced() -> None:
        metrics.BLOCK_NOTIFICATIONS.labels(scheme).inc()
        on_block()

    while True:
        try:
            source.listen(announced)
        except notify_longpoll.LongPollRefused:
            metrics.NOTIFY_FAILURES.labels(scheme).inc()
            log.warning("the node refuses waitforblockheight; polling only", extra={"url": _where(source.url)})
            return
        except Exception:
            metrics.NOTIFY_FAILURES.labels(scheme).inc()
            log.warning(
                "block notifications failed; polling meanwhile", extra={"url": _where(source.url)}, exc_info=True
            )
        eventlet.sleep(RETRY_S)


def _where(url: str) -> str:
    """Scheme, host and port only: a provider's URL may carry an API key in its path or query."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
