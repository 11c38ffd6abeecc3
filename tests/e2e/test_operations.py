"""Health, readiness, metrics, OpenAPI, and what a caller sees when a service is down."""

import time

import httpx


def test_liveness_and_readiness(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert set(ready.json()["services"]) == {"catalog", "accounts", "orders", "payments", "provisioning", "support"}
    # This stack runs no chain node: it sends each network's watcher status as an up-to-date watcher would, the
    # first ones as the stack comes up, so payments may still be recording them when the test starts.
    networks = {"bitcoin", "litecoin", "ethereum", "tron", "solana"}
    deadline = time.monotonic() + 10
    while set(watchers := client.get("/readyz").json()["watchers"]) != networks and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(watchers) == networks
    assert {report["state"] for report in watchers.values()} == {"following"}


def test_openapi_is_served_with_the_contract_paths(client):
    paths = client.get("/api/v1/openapi.json").json()["paths"]
    for path in (
        "/api/v1/catalog",
        "/api/v1/quotes",
        "/api/v1/accounts",
        "/api/v1/sessions",
        "/api/v1/me",
        "/api/v1/orders",
        "/api/v1/me/ssh-key",
        "/api/v1/admin/nodes",
    ):
        assert path in paths


def test_gateway_metrics_count_requests_by_route(client):
    client.get("/api/v1/catalog")
    text = client.get("/metrics").text
    assert 'kernodeck_http_requests_total{method="GET",route="/api/v1/catalog",status="200"}' in text


def test_each_service_exports_metrics(stack, client):
    client.get("/readyz")
    for name in ("catalog", "accounts", "orders", "payments", "provisioning"):
        port = stack.processes[name].env[f"{name.upper()}_METRICS_PORT"]
        text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        counts = [line for line in text.splitlines() if line.startswith("kernodeck_entrypoint_seconds_count{")]
        assert any('entrypoint="health"' in line and f'service="{name}"' in line for line in counts), name


def test_a_stopped_service_answers_503_then_recovers(stack, client, customer):
    orders = stack.processes["orders"]
    orders.stop()
    try:
        started = time.monotonic()
        response = client.get("/api/v1/orders", headers=customer["headers"])
        assert response.status_code == 503
        assert response.json()["code"] == "service_unavailable"
        assert time.monotonic() - started < 5
        assert client.get("/readyz").status_code == 503
        assert client.get("/readyz/self").status_code == 200  # the gateway's pod stays ready: it can do its job
        assert client.get("/api/v1/catalog").status_code == 200
    finally:
        orders.start()
        stack.wait_ready()
    assert client.get("/api/v1/orders", headers=customer["headers"]).status_code == 200
