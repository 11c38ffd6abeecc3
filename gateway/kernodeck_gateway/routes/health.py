import asyncio

from fastapi import APIRouter, Request

from kernodeck_contracts.clients import (
    AccountsClient,
    CatalogClient,
    OrdersClient,
    PaymentsClient,
    ProvisioningClient,
    ServiceClient,
    SupportClient,
)
from kernodeck_gateway.auth import Rpc
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.problems import Problem
from kernodeck_gateway.responses import Readiness, Status

router = APIRouter(tags=["operations"])
# every service, in the order /readyz names them
PROBED = (CatalogClient, AccountsClient, OrdersClient, PaymentsClient, ProvisioningClient, SupportClient)
PROBE_TIMEOUT_S = 2.0


@router.get("/healthz")
async def healthz() -> Status:
    return {"status": "ok"}


@router.get("/readyz/self", include_in_schema=False)  # a probe of the pod, not of the API
async def ready_self(request: Request, rpc: Rpc) -> Status:
    """This gateway can do its own job: it holds its connection to the broker (calls can be sent) and has the
    web frontend to serve. Its pod's readiness probe: one service down leaves every gateway ready, the pages and
    the rest of the API served. /readyz is the system's view, for dashboards and alerts."""
    if not rpc.connected:
        raise Problem(503, "service_unavailable", "not connected to the broker")
    if not (request.app.state.settings.web_dir / "index.html").exists():
        raise Problem(503, "service_unavailable", "no web frontend to serve")
    return {"status": "ok"}


@router.get("/readyz", responses=refusals(503))
async def readyz(rpc: Rpc) -> Readiness:
    """The system's view (dashboards, alerts, `make run`): every service answers (else 503). Also each chain watcher's state as payments last heard it
    (`following`, `lagging`, `silent`): a lagging watcher turns its methods off but leaves the API ready."""

    async def probe(client: type[ServiceClient]) -> dict | None:
        try:
            return await client(rpc.call, timeout=PROBE_TIMEOUT_S).health()
        except Exception:
            return None

    services = [client.service for client in PROBED]
    answers = dict(zip(services, await asyncio.gather(*(probe(c) for c in PROBED)), strict=True))
    down = [service for service, answer in answers.items() if answer is None]
    if down:
        raise Problem(503, "service_unavailable", f"not answering: {', '.join(down)}")
    return {
        "status": "ready",
        "services": {service: True for service in answers},
        "watchers": answers["payments"].get("watchers", {}),
    }
