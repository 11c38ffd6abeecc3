"""The web frontend (web/dist, built by `make web`), served at / on the API's origin.

The build is read when it is first asked for and read again when index.html changes (a rebuild), so a gateway
started before the build finishes (`make run` builds the frontend beside the starting services) serves it as
soon as it is there; until then / answers 503 with Retry-After, and the API works as ever. A build that failed
says so: `infra/web/build.sh` (make run's) writes its reason to `build-failed.txt` there, and / answers 503 with
that reason until a build succeeds, never "being built" for a build that is not going on.
"""

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
NOT_BUILT_RETRY_S = 5
FAILED = "build-failed.txt"  # written by infra/web/build.sh when the build fails, removed when it starts again
REASON_CHARS = 2000


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


class Build:
    """The files of the latest complete build in `web_dir`, or None while there is none."""

    def __init__(self, web_dir: Path):
        self.web_dir = web_dir
        self.version: tuple[int, int] | None = None
        self.assets: dict[str, Asset] | None = None
        self.warned = False

    def current(self) -> dict[str, Asset] | None:
        # The build writes index.html last (web/build.mjs): its change says a new build is complete.
        try:
            stat = (self.web_dir / "index.html").stat()
        except FileNotFoundError:
            return self._missing()
        version = (stat.st_mtime_ns, stat.st_size)
        if version != self.version:
            try:
                self.assets = {name: Asset(self.web_dir / name, kind) for name, kind in FILES.items()}
            except FileNotFoundError:
                return self._missing()
            self.version = version
            log.info("web frontend loaded from %s", self.web_dir)
        return self.assets

    def failure(self) -> str | None:
        """Why the last build failed, when it did (and nothing has been built since)."""
        try:
            return (self.web_dir / FAILED).read_text(errors="replace").strip()[-REASON_CHARS:] or "no reason given"
        except FileNotFoundError:
            return None

    def _missing(self) -> dict[str, Asset] | None:
        if not self.warned:
            log.warning("no web frontend at %s yet: `make web` builds it", self.web_dir)
            self.warned = True
        return self.assets


def router(web_dir: Path) -> APIRouter:
    """The pages' routes."""
    routes = APIRouter(include_in_schema=False)
    build = Build(web_dir)

    def serve(name: str, request: Request, cache: str) -> Response:
        assets = build.current()
        if assets is None and (reason := build.failure()) is not None:
            return Response(
                f"The web build failed (make web), so there is no web frontend to serve:\n\n{reason}\n\n"
                "Fix it and run `make web`: the gateway serves the build as soon as it is there.\n",
                status_code=503,
                media_type="text/plain; charset=utf-8",
                headers={"Cache-Control": "no-store", **SECURITY_HEADERS},
            )
        if assets is None:
            return Response(
                "The web frontend is being built (make web); reload in a moment.\n",
                status_code=503,
                media_type="text/plain; charset=utf-8",
                headers={"Retry-After": str(NOT_BUILT_RETRY_S), "Cache-Control": "no-store", **SECURITY_HEADERS},
            )
        return assets[name].response(request, cache)

    @routes.get("/")
    async def index(request: Request) -> Response:
        return serve("index.html", request, "no-cache")

    @routes.get("/app.js")
    async def script(request: Request) -> Response:
        # index.html names the files with their content's hash (?v=): a new build is a new address.
        return serve("app.js", request, "public, max-age=31536000, immutable")

    @routes.get("/app.css")
    async def styles(request: Request) -> Response:
        return serve("app.css", request, "public, max-age=31536000, immutable")

    return routes
