"""The web frontend (web/dist, built by `make web`), served at / on the API's origin."""

import gzip
import logging
from pathlib import Path

from fastapi import APIRouter, Request, Response

log = logging.getLogger(__name__)

FILES = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript", "app.css": "text/css"}
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


class Asset:
    """One built file, read once, kept with its gzip form."""

    def __init__(self, path: Path, media_type: str):
        self.body = path.read_bytes()
        self.gzipped = gzip.compress(self.body, compresslevel=9, mtime=0)
        self.media_type = media_type

    def response(self, request: Request, cache: str) -> Response:
        headers = {"Cache-Control": cache, "Vary": "Accept-Encoding", **SECURITY_HEADERS}
        if "gzip" in request.headers.get("accept-encoding", ""):
            return Response(self.gzipped, media_type=self.media_type, headers={**headers, "Content-Encoding": "gzip"})
        return Response(self.body, media_type=self.media_type, headers=headers)


def router(web_dir: Path) -> APIRouter:
    """The pages' routes; none when the frontend is not built (the API works without it)."""
    routes = APIRouter(include_in_schema=False)
    if not all((web_dir / name).is_file() for name in FILES):
        log.warning("no web frontend at %s: run `make web` to build it", web_dir)
        return routes
    assets = {name: Asset(web_dir / name, media_type) for name, media_type in FILES.items()}

    @routes.get("/")
    async def index(request: Request) -> Response:
        return assets["index.html"].response(request, "no-cache")

    @routes.get("/app.js")
    async def script(request: Request) -> Response:
        # index.html names the files with their content's hash (?v=): a new build is a new address.
        return assets["app.js"].response(request, "public, max-age=31536000, immutable")

    @routes.get("/app.css")
    async def styles(request: Request) -> Response:
        return assets["app.css"].response(request, "public, max-age=31536000, immutable")

    return routes
