"""A local HTTP double of the public price APIs: canned answers per path, every request recorded."""

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest


@dataclass
class Reply:
    status: int
    body: bytes
    delay_s: float


class HttpDouble:
    def __init__(self):
        self.replies: dict[str, Reply] = {}
        self.requests: list[tuple[str, str]] = []  # (path, raw query string)
        self.stop = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def reply(self, path: str, body, status: int = 200, delay_s: float = 0) -> None:
        """Answer GET `path` with `body`: text sent as is, anything else as JSON."""
        raw = body if isinstance(body, str) else json.dumps(body)
        self.replies[path] = Reply(status, raw.encode(), delay_s)

    def query(self, index: int = -1) -> dict[str, list[str]]:
        return parse_qs(self.requests[index][1])

    def _handler(self):
        double = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                url = urlsplit(self.path)
                double.requests.append((url.path, url.query))
                reply = double.replies.get(url.path, Reply(404, b'{"errors":[{"id":"not_found"}]}', 0))
                if reply.delay_s and double.stop.wait(reply.delay_s):
                    return
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting, as a timeout test wants

            def log_message(self, *args):
                pass

        return Handler


@pytest.fixture
def http_double():
    double = HttpDouble()
    thread = threading.Thread(target=double.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield double
    double.stop.set()
    double.server.shutdown()
    double.server.server_close()
    thread.join(timeout=5)
