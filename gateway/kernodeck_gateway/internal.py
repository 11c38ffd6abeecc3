"""The internal port's application: /metrics and the API docs, when settings put them there."""

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

from kernodeck_gateway.routes import metrics
from kernodeck_gateway.settings import GatewaySettings

OPENAPI_PATH = "/api/v1/openapi.json"
DOCS_PATH = "/api/v1/docs"


def create_internal_app(settings: GatewaySettings, public: FastAPI) -> FastAPI:
    """Serves what `settings` exposes as "internal"; `public` is the API whose document it shows."""
    internal = FastAPI(title=f"{public.title} (internal)", openapi_url=None, docs_url=None, redoc_url=None)
    if settings.metrics == "internal":
        internal.include_router(metrics.router)
    if settings.api_docs == "internal":

        @internal.get(OPENAPI_PATH, include_in_schema=False)
        async def openapi() -> dict:
            return public.openapi()

        @internal.get(DOCS_PATH, include_in_schema=False)
        async def docs() -> HTMLResponse:
            return get_swagger_ui_html(openapi_url=OPENAPI_PATH, title=public.title)

    return internal
