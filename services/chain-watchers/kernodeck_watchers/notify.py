"""Block notifications: the node announces each new block and the scan loop wakes at once.

A Bitcoin or Litecoin watcher long-polls the node's RPC (notify_longpoll):
the node answers it from the thread that connects the block, while its ZMQ
`hashblock` waits in the queue behind the wallet's and the indexes' own
handling of the block. Its ZMQ URL, when set, serves where the node
refuses the long poll. Elsewhere the notification URL's scheme picks the
listener: `tcp://` or `ipc://` is a ZMQ publisher (notify_zmq: java-tron's
`block`), `ws://` or `wss://` a JSON-RPC websocket subscription (notify_ws:
an Ethereum node's `newHeads`, Solana's `slotSubscribe`). Blocks announced
while a listener is disconnected are lost; the scan loop's polling covers
them.
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
    fallback: "BlockSource | None" = None  # listened to instead where the node refuses the long poll

    @property
    def scheme(self) -> str:
        return urlsplit(self.url).scheme


def block_source(settings: WatcherSettings) -> BlockSource | None:
    """Where this watcher hears of new blocks; None: polling only."""
    announced = _announced(settings.network, settings.block_notify_url)
    if settings.network in LONG_POLLED:
        rpc = utxo_rpc(settings, notify_longpoll.WAIT_MS / 1000 + settings.rpc_timeout_s)
        return BlockSource(rpc.url, partial(notify_longpoll.listen, rpc), fallback=announced)
    return announced


def _announced(network: str, url: str) -> BlockSource | None:
    """The node's own announcements at `url` (ZMQ or a websocket subscription); None where there are none."""
    if not url:
        return None
    scheme = urlsplit(url).scheme
    if scheme in ("tcp", "ipc") and network in ZMQ_TOPICS:
        return BlockSource(url, partial(notify_zmq.listen, url, topic=ZMQ_TOPICS[network]))
    if scheme in ("ws", "wss") and network in notify_ws.SUBSCRIPTIONS:
        return BlockSource(url, partial(notify_ws.listen, url, subscription=notify_ws.SUBSCRIPTIONS[network]))
    log.warning("no block notifications from this kind of URL", extra={"url": _where(url)})
    return None


def listen_for_blocks(source: BlockSource, on_block: Callable[[], None]) -> None:
    """Call `on_block` for every block the node announces, until the greenthread is killed.

    A failure never stops the watcher: it logs, polls meanwhile, and connects
    and subscribes again after RETRY_S. A node that refuses the long poll leaves it on the source's fallback
    (its ZMQ), or polling for good.
    """

    def announced() -> None:
        metrics.BLOCK_NOTIFICATIONS.labels(source.scheme).inc()
        on_block()

    while True:
        try:
            source.listen(announced)
        except notify_longpoll.LongPollRefused:
            metrics.NOTIFY_FAILURES.labels(source.scheme).inc()
            instead = _where(source.fallback.url) if source.fallback else "polling only"
            log.warning("the node refuses waitforblockheight", extra={"url": _where(source.url), "instead": instead})
            if source.fallback is None:
                return
            source = source.fallback
            continue
        except Exception:
            metrics.NOTIFY_FAILURES.labels(source.scheme).inc()
            log.warning(
                "block notifications failed; polling meanwhile", extra={"url": _where(source.url)}, exc_info=True
            )
        eventlet.sleep(RETRY_S)


def _where(url: str) -> str:
    """Scheme, host and port only: a provider's URL may carry an API key in its path or query."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"
