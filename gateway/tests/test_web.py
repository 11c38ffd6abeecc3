"""The web frontend's routes follow the build: 503 until web/dist is built, served once it is, a rebuild
served without a restart."""

import asyncio
import os

import httpx
import pytest

from kernodeck_gateway.app import create_app
from kernodeck_gateway.settings import GatewaySettings

pytestmark = pytest.mark.unit


def get(app, path: str, **headers) -> httpx.Response:
    async def fetch() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway") as client:
            return await client.get(path, headers=headers)

    return asyncio.run(fetch())


def build(web_dir, version: str) -> None:
    web_dir.mkdir(exist_ok=True)
    (web_dir / "app.js").write_text(f"console.log('{version}')")
    (web_dir / "app.css").write_text(f"/* {version} */")
    index = web_dir / "index.html"
    index.write_text(f"<title>{version}</title>")
    # A rebuild within one clock tick still differs in size or mtime; make the mtime differ for sure.
    stat = index.stat()
    os.utime(index, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))


def test_not_built_yet_is_a_503_with_retry_after_and_the_api_still_answers(tmp_path):
    app = create_app(GatewaySettings(web_dir=tmp_path / "dist"))
    page = get(app, "/")
    assert page.status_code == 503
    assert page.headers["retry-after"] == "5" and page.headers["cache-control"] == "no-store"
    assert "make web" in page.text
    assert get(app, "/app.js").status_code == 503
    assert get(app, "/api/v1/openapi.json").status_code == 200


def test_a_build_that_appears_after_start_is_served_and_a_rebuild_replaces_it(tmp_path):
    web_dir = tmp_path / "dist"
    app = create_app(GatewaySettings(web_dir=web_dir))
    assert get(app, "/").status_code == 503

    build(web_dir, "one")
    page = get(app, "/")
    assert page.status_code == 200 and page.text == "<title>one</title>"
    assert page.headers["cache-control"] == "no-cache"
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    script = get(app, "/app.js", **{"accept-encoding": "gzip"})
    assert script.headers["content-encoding"] == "gzip" and script.text == "console.log('one')"
    assert get(app, "/app.css").headers["cache-control"] == "public, max-age=31536000, immutable"

    build(web_dir, "two")
    assert get(app, "/").text == "<title>two</title>"
    assert get(app, "/app.js").text == "console.log('two')"


def test_the_last_build_is_served_while_a_rebuild_has_removed_it(tmp_path):
    web_dir = tmp_path / "dist"
    build(web_dir, "one")
    app = create_app(GatewaySettings(web_dir=web_dir))
    assert get(app, "/").text == "<title>one</title>"
    for name in ("index.html", "app.js", "app.css"):
        (web_dir / name).unlink()
    assert get(app, "/").text == "<title>one</title>"
    assert get(app, "/app.js", **{"accept-encoding": "gzip"}).text == "console.log('one')"


def test_the_pods_own_readiness_needs_the_broker_connection_and_the_web_build(tmp_path):
    """/readyz/self (the Kubernetes readiness probe) asks nothing of the services: the broker connection the
    gateway holds, and the build it serves."""
    web_dir = tmp_path / "dist"
    app = create_app(GatewaySettings(web_dir=web_dir))

    class Connected:
        connected = True

    app.state.rpc = Connected()
    assert get(app, "/readyz/self").status_code == 503  # nothing built
    build(web_dir, "one")
    assert get(app, "/readyz/self").json() == {"status": "ok"}
    Connected.connected = False
    answer = get(app, "/readyz/self")
    assert answer.status_code == 503 and "broker" in answer.json()["detail"]
