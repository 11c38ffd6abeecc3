from fastapi import APIRouter

from kernodeck_gateway.auth import Rpc
from kernodeck_gateway.responses import Catalog, Quote
from kernodeck_gateway.schemas import OrderConfiguration, present_model, present_quote

router = APIRouter(prefix="/api/v1", tags=["catalog"])


@router.get("/catalog")
async def get_catalog(rpc: Rpc) -> Catalog:
    listing = await rpc.call("catalog", "list_catalog")
    return {
        "models": [present_model(m) for m in listing["models"]],
        "durations_days": listing["durations_days"],
        "lots": listing["lots"],
        "preparations": listing["preparations"],
    }


@router.post("/quotes")
async def create_quote(body: OrderConfiguration, rpc: Rpc) -> Quote:
    quote = await rpc.call("catalog", "quote", body.model, body.duration_days, body.lots, body.preparation)
    return present_quote(quote)
