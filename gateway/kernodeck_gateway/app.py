"""The FastAPI application: routes, problem+json errors, limits, metrics."""

from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from kernodeck_gateway import openapi, problems, web
from kernodeck_gateway.body_limit import BodyLimitMiddleware
from kernodeck_gateway.http_metrics import MetricsMiddleware
from kernodeck_gateway.internal import DOCS_PATH, OPENAPI_PATH
from kernodeck_gateway.routes import (
    accounts,
    admin,
    balance,
    catalog,
    extensions,
    health,
    metrics,
    orders,
    payments,
    resources,
    ssh_key,
    support,
    telegram,
    topups,
)
from kernodeck_gateway.rpc import RpcClient
from kernodeck_gateway.settings import GatewaySettings
from kernodeck_gateway.text_guard import refuse_unstorable_text


def create_app(settings: GatewaySettings | None = None) -> FastAPI:
    settings = settings or GatewaySettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.rpc = RpcClient(settings.amqp_uri, timeout=settings.rpc_timeout_s)
        await app.state.rpc.connect()
        try:
            yield
        finally:
            await app.state.rpc.close()

    public_docs = settings.api_docs == "public"
    app = FastAPI(
        title="Kernodeck API",
        version="1",
        openapi_url=OPENAPI_PATH if public_docs else None,
        docs_url=DOCS_PATH if public_docs else None,
        redoc_url=None,
        lifespan=lifespan,
        dependencies=[Depends(refuse_unstorable_text)],
    )
    app.state.settings = settings
    for exc_type, handler in problems.HANDLERS.items():
        app.add_exception_handler(exc_type, handler)
    modules = [
        health,
        catalog,
        accounts,
        ssh_key,
        balance,
        orders,
        extensions,
        payments,
        topups,
        resources,
        support,
        telegram,
        admin,
    ]
    if settings.metrics == "public":
        modules.append(metrics)
    routers = [m.router for m in modules]
    for router in routers:
        app.include_router(router)
    openapi.install(app, routers)
    app.include_router(web.router(settings.web_dir))
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware)
    return app
