"""Prometheus metrics every service exports, and the endpoint that serves them."""

import threading
from collections.abc import Callable
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import Counter, Gauge, Histogram, make_wsgi_app

ENTRYPOINT_SECONDS = Histogram(
    "kernodeck_entrypoint_seconds",
    "Time spent in an RPC, event or timer entrypoint",
    ["service", "entrypoint"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
ENTRYPOINT_ERRORS = Counter(
    "kernodeck_entrypoint_errors_total",
    "Entrypoint calls that ended in an error, by error code",
    ["service", "entrypoint", "code"],
)
EVENTS_PUBLISHED = Counter(
    "kernodeck_events_published_total", "Outbox events confirmed by the broker", ["service", "event_type"]
)
PUBLISH_FAILURES = Counter("kernodeck_event_publish_failures_total", "Outbox publish attempts that failed", ["service"])
EVENTS_UNROUTABLE = Counter(
    "kernodeck_events_unroutable_total",
    "Outbox events the broker returned because no queue receives them (kept unsent, retried)",
    ["service", "event_type"],
)
OUTBOX_PENDING = Gauge("kernodeck_outbox_pending", "Outbox rows not yet confirmed by the broker", ["service"])
OUTBOX_OLDEST_AGE = Gauge(
    "kernodeck_outbox_oldest_pending_age_seconds",
    "Age of the oldest outbox row not yet confirmed (0: none)",
    ["service"],
)
EVENTS_CONSUMED = Counter("kernodeck_events_consumed_total", "Events applied by a consumer", ["service", "consumer"])
EVENTS_DEAD_LETTERED = Counter(
    "kernodeck_events_dead_lettered_total",
    "Events a consumer could not handle, set aside in <service>.dead-letters for an operator",
    ["service"],
)
EVENTS_DUPLICATE = Counter(
    "kernodeck_events_duplicate_total", "Redelivered events ignored by a consumer", ["service", "consumer"]
)
EVENTS_REDELIVERED = Counter(
    "kernodeck_events_redelivered_total", "Event messages the broker delivered again", ["service", "consumer"]
)
HANDLER_FAILURES = Counter(
    "kernodeck_event_handler_failures_total",
    "Event handlers that failed; the message is requeued",
    ["service", "consumer"],
)


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format, *args):  # probes and scrapes would fill the logs
        pass


def serve(port: int, host: str = "127.0.0.1", ready: Callable[[], bool] = lambda: True) -> None:
    """Serve /metrics on `port` (0 disables it: tests), and the probes: /healthz answers while the process
    runs, /readyz while `ready()` (503 before the service has started and once it is stopping)."""
    if not port:
        return
    metrics_app = make_wsgi_app()

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path in ("/healthz", "/readyz"):
            ok = path == "/healthz" or ready()
            start_response("200 OK" if ok else "503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"ok\n" if ok else b"not ready\n"]
        return metrics_app(environ, start_response)

    server = make_server(host, port, app, _Server, handler_class=_Quiet)
    threading.Thread(target=server.serve_forever, name="metrics", daemon=True).start()
