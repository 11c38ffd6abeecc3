"""The metrics port: /metrics for Prometheus, /healthz and /readyz for Kubernetes' probes."""

import socket
import time

import httpx

from kernodeck_kit import metrics


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(port: int, path: str) -> httpx.Response:
    deadline = time.monotonic() + 5
    while True:
        try:
            return httpx.get(f"http://127.0.0.1:{port}{path}", timeout=2)
        except httpx.ConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_probes_answer_beside_the_metrics():
    ready = []
    port = free_port()
    metrics.serve(port, ready=lambda: bool(ready))
    assert get(port, "/healthz").status_code == 200
    assert get(port, "/readyz").status_code == 503
    ready.append(True)
    assert get(port, "/readyz").status_code == 200
    scraped = get(port, "/metrics")
    assert scraped.status_code == 200 and "kernodeck_entrypoint_seconds" in scraped.text
