"""The scan loop: a nameko entrypoint that runs its method again and again, one worker at a time.

The method returns how many seconds to wait before the next turn (the poll
interval, a back-off, a standby's retry). A block announced by the node
(ZMQ `hashblock`, Ethereum's `newHeads`, Bitcoin Core's `waitforblockheight`
long poll: see notify.py) cuts the wait short; one announced during a turn
starts the next at once.
"""

from eventlet.event import Event
from eventlet.queue import Empty, LightQueue
from nameko.extensions import Entrypoint
from nameko.messaging import QueueConsumer

from kernodeck_kit.transport.dependencies import settings_of
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.notify import block_source, listen_for_blocks

_STOP = object()


class ScanLoop(Entrypoint):
    # The container's own consumer: the first turn waits until it consumes, or payments' answer to
    # the first RPC could reach the broker before the reply queue exists, and be lost.
    queue_consumer = QueueConsumer()

    def __init__(self, on_error_s: float = 5.0, **kwargs):
        self.on_error_s = on_error_s  # the wait after a turn that raised
        super().__init__(**kwargs)

    def setup(self):
        self.block_source = block_source(settings_of(self.container, WatcherSettings))
        self._wake = LightQueue()
        self._turn_done = Event()
        self._next_wait = 0.0
        self._threads = []

    def start(self):
        self._threads.append(self.container.spawn_managed_thread(self._run))
        if self.block_source:
            listener = self.container.spawn_managed_thread(lambda: listen_for_blocks(self.block_source, self.wake))
            self._threads.append(listener)

    def stop(self):
        self._wake.put(_STOP)
        self._threads[0].wait()
        for thread in self._threads[1:]:
            thread.kill()

    def kill(self):
        for thread in self._threads:
            thread.kill()

    def wake(self) -> None:
        self._wake.put(None)

    def _run(self):
        self.queue_consumer.start()
        wait = 0.0
        while True:
            try:
                if self._wake.get(timeout=wait) is _STOP:
                    return
            except Empty:
                pass
            while not self._wake.empty():  # announcements that came together make one turn
                if self._wake.get() is _STOP:
                    return
            self.container.spawn_worker(self, (), {}, handle_result=self._handle_result)
            self._turn_done.wait()
            self._turn_done.reset()
            wait = self._next_wait

    def _handle_result(self, worker_ctx, result, exc_info):
        self._next_wait = float(result) if exc_info is None else self.on_error_s
        self._turn_done.send()
        return result, exc_info


scan_loop = ScanLoop.decorator
