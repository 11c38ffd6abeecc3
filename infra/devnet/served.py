"""What the HTTP doubles (tron_double, solana_double) share: the server thread, the block clock, start and stop."""

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

POLL_S = 0.01  # serve_forever's shutdown poll: stop_serving() returns at once, not after the default 0.5 s
JOIN_S = 10.0  # the longest stop() waits for each of the double's threads


class JsonHandler(BaseHTTPRequestHandler):
    """Answers in JSON; reaches the double's request handler as `self.server.app`."""

    server: "Server"

    def reply_json(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args) -> None:
        """At debug level only: a test run makes thousands of calls."""
        logging.getLogger(type(self).__module__).debug(format, *args)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 drops the connections of a watcher reading 8 Solana slots ahead at once:
    # each dropped one waits a second for its SYN to be sent again.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], handler: type[JsonHandler], app: object):
        super().__init__(address, handler)
        self.app = app


class ServedDouble:
    """A double's API on 127.0.0.1 and, every `block_interval_s` (None: only on request), a new block.

    Subclasses set `handler`, and give `app()` (what the handler calls) and `produce_block()`.
    `port` 0 picks a free one, kept when `serve()` brings the API back after `stop_serving()`.
    """

    handler: type[JsonHandler]

    def __init__(self, *, port: int, block_interval_s: float | None):
        self.port = port
        self.block_interval_s = block_interval_s
        self._server: Server | None = None
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def app(self) -> object:
        raise NotImplementedError

    def produce_block(self) -> None:
        raise NotImplementedError

    def start(self) -> Self:
        self.serve()
        if self.block_interval_s:
            self._spawn(self._produce_blocks)
        return self

    def serve(self) -> Self:
        """Serve the API: at start, and again (same port, same chain) after `stop_serving()`."""
        self._server = Server(("127.0.0.1", self.port), self.handler, self.app())
        self.port = self._server.server_address[1]
        self._spawn(self._server.serve_forever, POLL_S)
        return self

    def stop_serving(self) -> None:
        """Take the API away, as a node that is down; the chain stays, and goes on producing blocks."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def stop(self) -> None:
        self._stopping.set()
        self.stop_serving()
        for thread in self._threads:
            thread.join(JOIN_S)

    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, name=type(self).__name__, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _produce_blocks(self) -> None:
        while not self._stopping.wait(self.block_interval_s):
            self.produce_block()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
