import asyncio

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from kernodeck_gateway.auth import Rpc
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.problems import Problem
from kernodeck_gateway.responses import Readiness, Status

router = APIRouter(tags=["operations"])
SERVICES = ("catalog", "accounts", "orders", "payments", "provisioning")


@router.get("/healthz")
async def healthz() -> Status:
    return {"status": "ok"}


@router.get("/readyz", responses=refusals(503))
async def readyz(rpc: Rpc) -> Readiness:
    async def probe(service: str) -> bool:
        try:
            await rpc.call(service, "health", timeout=2.0)
            return True
        except Exception:
            return False

    results = dict(zip(SERVICES, await asyncio.gather(*(probe(s) for s in SERVICES)), strict=True))
    down = [service for service, ok in results.items() if not ok]
    if down:
        raise Problem(503, "service_unavailable", f"not answering: {', '.join(down)}")
    return {"status": "ready", "services": results}


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
