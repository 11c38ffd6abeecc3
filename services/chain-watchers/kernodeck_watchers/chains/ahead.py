"""Reading blocks ahead: while the scan matches and commits one height, the next few are on their way.

A Solana provider takes a good part of a slot's 400 ms to answer for one
mainnet block; one request at a time, the watcher would fall behind the
chain. `Ahead` keeps up to `window` requests in flight, in green threads
(under eventlet each one blocks only itself), and hands the answers back in
the order asked. A read that does not follow the previous one (after a
reorganisation's rewind, or a failed read) forgets what was read ahead:
nothing fetched before the scan's chain changed is used after it. A read
ahead that failed is made again when its height is asked for: the block
missing then (at a racing provider's tip) may be there now.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from eventlet import GreenPool
from eventlet.greenthread import GreenThread

T = TypeVar("T")


class Ahead(Generic[T]):
    def __init__(self, fetch: Callable[[int], T], window: int):
        if window < 1:
            raise ValueError("the window holds at least the height asked for")
        self.fetch = fetch
        self.window = window
        # Reads dropped by `forget` still finish in the pool: it bounds those too.
        self._pool = GreenPool(window)
        self._started: dict[int, GreenThread] = {}
        self._next: int | None = None  # the height a read in sequence asks for next

    def get(self, height: int, newest: int) -> T:
        """fetch(height); meanwhile the heights after it, up to `newest`, are being fetched."""
        if height != self._next:
            self.forget()
        for ahead in range(height, min(height + self.window, newest + 1)):
            if ahead not in self._started:
                self._started[ahead] = self._pool.spawn(self._outcome, ahead)
        started = self._started.pop(height, None)
        found, error = started.wait() if started is not None else (None, None)
        if started is None or error is not None:  # a failure read ahead may be over by now (a block not there yet)
            found, error = self._outcome(height)
        if error is not None:
            self.forget()
            raise error
        self._next = height + 1
        return found

    def _outcome(self, height: int) -> tuple[T | None, Exception | None]:
        """The fetch's answer or its error, as a value: one read ahead and never asked for fails unheard."""
        try:
            return self.fetch(height), None
        except Exception as error:
            return None, error

    def forget(self) -> None:
        self._started.clear()
        self._next = None
