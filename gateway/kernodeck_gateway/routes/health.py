import asyncio

from fastapi import APIRouter

from kernodeck_gateway.auth import Rpc
from kernodeck_gateway.openapi import refusals
from kernodeck_gateway.problems import Problem
from kernodeck_gateway.responses import Readiness, Status

router = APIRouter(tags=["operations"])
SERVICES = ("catalog", "accounts", "orders", "payments", "provisioning", "support")


@router.get("/healthz")
async def healthz() -> Status:
    return {"status": "ok"}


@router.get("/readyz", responses=refusals(503))
async def readyz(rpc: Rpc) -> Readiness:
    """Every service answers (else 503). Also each chain watcher's state as payments last heard it
    (`following`, `lagging`, `silent`): a lagging watcher turns its methods off but leaves the API ready."""

    async def probe(service: str) -> dict | None:
        try:
            return await rpc.call(service, "health", timeout=2.0)
        except Exception:
            return None

    answers = dict(zip(SERVICES, await asyncio.gather(*(probe(s) for s in SERVICES)), strict=True))
    down = [service for service, answer in answers.items() if answer is None]
    if down:
        raise Problem(503, "service_unavailable", f"not answering: {', '.join(down)}")
    return {
        "status": "ready",
        "services": {service: True for service in answers},
        "watchers": answers["payments"].get("watchers", {}),
    }
