"""Request counts and latency per route, served at /metrics."""

import time

from prometheus_client import Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUESTS = Counter("kernodeck_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram(
    "kernodeck_http_request_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)


class MetricsMiddleware:
    def __init__(self, app: ASGIApp):
        self.app = app
        # Each (method, route, status)'s two children, found once: labels() takes a lock and builds a key.
        self._children: dict[tuple[str, str, int], tuple] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def capture(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, capture)
        finally:
            # The route template, not the raw path, keeps label cardinality bounded.
            route = getattr(scope.get("route"), "path", "unmatched")
            key = (scope["method"], route, status)
            if key not in self._children:
                self._children[key] = (REQUESTS.labels(key[0], route, str(status)), LATENCY.labels(key[0], route))
            requests, latency = self._children[key]
            requests.inc()
            latency.observe(time.perf_counter() - started)
