"""OS threads of their own for password hashing, at a lower CPU priority, awaited by green threads.

eventlet's shared thread pool would do the work too, but its threads also resolve host names and
would keep the lowered priority forever; these threads only hash.
"""

import logging
from collections.abc import Callable

from eventlet import hubs, patcher

_os = patcher.original("os")
_queue = patcher.original("queue")
_threading = patcher.original("threading")

log = logging.getLogger(__name__)


class _Job:
    def __init__(self, work: Callable, args: tuple):
        self.work, self.args = work, args
        self.result = self.error = None
        self.done_read, self.done_write = _os.pipe()

    def run(self) -> None:
        try:
            self.result = self.work(*self.args)
        except BaseException as error:  # handed to the waiting green thread, which raises it
            self.error = error
        try:
            _os.write(self.done_write, b"1")
        except OSError:
            pass  # the green thread that waited was killed: nobody reads the answer
        finally:
            _os.close(self.done_write)


class HashingThreads:
    """`count` OS threads, each at `niceness` (Linux: per thread), running one job at a time from a queue."""

    def __init__(self, count: int, niceness: int):
        self._jobs = _queue.SimpleQueue()
        self._niceness = niceness
        for number in range(count):
            _threading.Thread(target=self._serve, name=f"password-hashing-{number}", daemon=True).start()

    def _serve(self) -> None:
        try:
            _os.setpriority(_os.PRIO_PROCESS, 0, self._niceness)  # 0: this thread only, on Linux
        except OSError:
            log.warning("password hashing runs at normal priority: the niceness could not be set")
        while True:
            self._jobs.get().run()

    def run(self, work: Callable, *args):
        """`work(*args)` on one of the threads; the calling green thread waits, the others run on."""
        job = _Job(work, args)
        self._jobs.put(job)
        try:
            hubs.trampoline(job.done_read, read=True)
        finally:
            _os.close(job.done_read)
        if job.error is not None:
            raise job.error
        return job.result
