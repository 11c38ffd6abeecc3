"""/metrics and the API docs on the public port, on the internal port only, or nowhere; the settings
that go with them and with the session cookie."""

import asyncio

import httpx
import pytest
from pydantic import ValidationError

from kernodeck_gateway.app import create_app
from kernodeck_gateway.internal import create_internal_app
from kernodeck_gateway.settings import GatewaySettings

pytestmark = pytest.mark.unit

PATHS = ("/metrics", "/api/v1/openapi.json", "/api/v1/docs")


def get(app, path: str) -> httpx.Response:
    async def fetch() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway") as client:
            return await client.get(path)

    return asyncio.run(fetch())


def statuses(app) -> dict[str, int]:
    return {path: get(app, path).status_code for path in PATHS}


def test_by_default_metrics_and_docs_are_public():
    assert statuses(create_app(GatewaySettings())) == dict.fromkeys(PATHS, 200)


def test_served_on_the_internal_port_only():
    settings = GatewaySettings(metrics="internal", api_docs="internal", internal_port=9180)
    public = create_app(settings)
    assert statuses(public) == dict.fromkeys(PATHS, 404)
    internal = create_internal_app(settings, public)
    assert statuses(internal) == dict.fromkeys(PATHS, 200)
    document = get(internal, "/api/v1/openapi.json").json()
    assert "/api/v1/orders" in document["paths"] and "/metrics" not in document["paths"]
    assert "kernodeck_http_requests_total" in get(internal, "/metrics").text


def test_each_can_be_turned_off_alone():
    settings = GatewaySettings(metrics="off", api_docs="internal", internal_port=9180)
    public = create_app(settings)
    assert statuses(public) == dict.fromkeys(PATHS, 404)
    assert statuses(create_internal_app(settings, public)) == {
        "/metrics": 404,
        "/api/v1/openapi.json": 200,
        "/api/v1/docs": 200,
    }
    assert statuses(create_app(GatewaySettings(api_docs="off"))) == {
        "/metrics": 200,
        "/api/v1/openapi.json": 404,
        "/api/v1/docs": 404,
    }


@pytest.mark.parametrize("change", [{"metrics": "internal"}, {"api_docs": "internal"}])
def test_internal_serving_needs_an_internal_port(change):
    with pytest.raises(ValidationError):
        GatewaySettings(**change)
    assert GatewaySettings(**change, internal_port=9180)


def test_the_session_cookie_is_secure_unless_the_gateway_is_on_loopback():
    assert GatewaySettings().cookie_secure is True
    for host in ("127.0.0.1", "::1", "localhost"):
        assert GatewaySettings(cookie_secure=False, host=host).cookie_secure is False
    with pytest.raises(ValidationError):
        GatewaySettings(cookie_secure=False, host="0.0.0.0")
    assert GatewaySettings(host="0.0.0.0").cookie_secure is True
