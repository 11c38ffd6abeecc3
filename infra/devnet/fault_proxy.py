"""A small HTTP proxy in front of a real local node that answers some requests as mainnet providers do.

Every request is forwarded to the node unchanged (method, path, headers,
body) unless the proxy's `fault` answers it first: a callable given the
request's path and parsed JSON body, returning a `Reply` or None (forward).
The faults providers show every day are built in:

- `throttle(n, retry_after)`: HTTP 429 with `Retry-After` to the next n requests;
- `fail(n)`: HTTP 503 with an HTML body to the next n requests (a gateway's error page);
- `rpc_answer(method, result_of)`: a JSON-RPC `method` answered with `result_of(params)`
  (a lagging backend's older tip, `null` at the tip, `[]` for a hash it does not know);
  `result_of` may return `RpcFailure(code, message)` for an error object instead;
- `per_call(proxy, reply_to)`: each call of a single or batch request answered by `reply_to(call)`,
  or forwarded alone (a capped `eth_getLogs` range, `[]` inside a batch).

`requests` records (monotonic time, path, body) of every request, answered or forwarded; `headers` their
headers.
"""

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOP_HEADERS = {"host", "content-length", "connection", "transfer-encoding"}


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RpcFailure:
    code: int
    message: str


Fault = Callable[[str, Any], Reply | None]


def throttle(times: int, retry_after: str | None) -> Fault:
    left = [times]

    def fault(path: str, body: Any) -> Reply | None:
        if left[0] <= 0:
            return None
        left[0] -= 1
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        return Reply(429, b"Too Many Requests", headers)

    return fault


def fail(times: int) -> Fault:
    left = [times]

    def fault(path: str, body: Any) -> Reply | None:
        if left[0] <= 0:
            return None
        left[0] -= 1
        return Reply(
            503, b"<html><body>503 Service Temporarily Unavailable</body></html>", {"Content-Type": "text/html"}
        )

    return fault


def rpc_answer(method: str, result_of: Callable[[list], Any]) -> Fault:
    """Answer single JSON-RPC calls of `method` (batches are forwarded)."""

    def fault(path: str, body: Any) -> Reply | None:
        if not isinstance(body, dict) or body.get("method") != method:
            return None
        result = result_of(body.get("params") or [])
        reply = {"jsonrpc": body.get("jsonrpc", "2.0"), "id": body.get("id")}
        if isinstance(result, RpcFailure):
            reply |= {"result": None, "error": {"code": result.code, "message": result.message}}
        else:
            reply |= {"result": result, "error": None}
        return Reply(200, json.dumps(reply).encode(), {"Content-Type": "application/json"})

    return fault


def per_call(proxy: "FaultProxy", reply_to: Callable[[dict], dict | None]) -> Fault:
    """Each JSON-RPC call, single or in a batch, answered by `reply_to(call)` (a whole reply object), or
    forwarded alone to the node when that gives None."""

    def answer(call: dict) -> dict:
        own = reply_to(call)
        if own is not None:
            return own
        forwarded = proxy.forward("/", json.dumps(call).encode(), {"Content-Type": "application/json"})
        return json.loads(forwarded.body)

    def fault(path: str, body: Any) -> Reply | None:
        if isinstance(body, list):
            answers = [answer(call) for call in body]
        elif isinstance(body, dict):
            answers = answer(body)
        else:
            return None
        return Reply(200, json.dumps(answers).encode(), {"Content-Type": "application/json"})

    return fault


class FaultProxy:
    def __init__(self, upstream: str):
        self.upstream = upstream.rstrip("/")
        self.fault: Fault | None = None
        self.requests: list[tuple[float, str, Any]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, in the same order
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                proxy.requests.append((time.monotonic(), self.path, body))
                proxy.headers.append(dict(self.headers.items()))
                fault = proxy.fault
                reply = fault(self.path, body) if fault is not None else None
                if reply is None:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
                    reply = proxy.forward(self.path, raw, headers)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def forward(self, path: str, raw: bytes, headers: dict[str, str]) -> Reply:
        request = urllib.request.Request(self.upstream + path, data=raw, headers=headers, method="POST")
        try:
            response = urllib.request.urlopen(request, timeout=60)
        except urllib.error.HTTPError as error:
            response = error
        with response:
            kept = {k: v for k, v in response.headers.items() if k.lower() not in HOP_HEADERS}
            return Reply(response.status, response.read(), kept)

    def start(self) -> "FaultProxy":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "FaultProxy":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
