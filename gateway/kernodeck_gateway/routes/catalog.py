from fastapi import APIRouter

from kernodeck_gateway.clients import CatalogService
from kernodeck_gateway.responses import Catalog, Quote
from kernodeck_gateway.schemas import OrderConfiguration, present_model, present_quote

router = APIRouter(prefix="/api/v1", tags=["catalog"])


@router.get("/catalog")
async def get_catalog(catalog: CatalogService) -> Catalog:
    listing = await catalog.list_catalog()
    return {
        "models": [present_model(m) for m in listing.models],
        "durations_days": listing.durations_days,
        "lots": listing.lots.model_dump(),
        "preparations": [p.model_dump() for p in listing.preparations],
    }


@router.post("/quotes")
async def create_quote(body: OrderConfiguration, catalog: CatalogService) -> Quote:
    quote = await catalog.quote(
        model=body.model, duration_days=body.duration_days, lots=body.lots, preparation=body.preparation
    )
    return present_quote(quote.model_dump())
