"""The catalog's nameko entrypoints: thin, over the domain and the store."""

import time
from dataclasses import asdict

from nameko.rpc import rpc

from kernodeck_catalog.domain import DURATIONS_DAYS, MAX_LOTS, MIN_LOTS, Catalog
from kernodeck_catalog.store import SqlCatalog
from kernodeck_catalog.use_cases import apply_capacity, current_catalog
from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import CapacityChanged
from kernodeck_kit.events import consumer
from kernodeck_kit.nameko_deps import Database, Instrumented
from kernodeck_kit.units import SqlUnits

# Replicas each keep a copy; capacity events reach one replica, so the copy
# expires quickly rather than waiting for an invalidation that never comes.
CACHE_SECONDS = 1.0


class CatalogService:
    name = "catalog"

    db = Database()
    instrumented = Instrumented()

    _cache: tuple[float, Catalog] | None = None

    @property
    def units(self) -> SqlUnits:
        return SqlUnits(self.db, SqlCatalog)

    def _catalog(self) -> Catalog:
        cached = CatalogService._cache
        if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        catalog = current_catalog(self.units)
        CatalogService._cache = (time.monotonic(), catalog)
        return catalog

    @rpc
    def health(self) -> dict:
        return {"service": self.name, "models": len(self._catalog().models)}

    @rpc
    def list_catalog(self) -> dict:
        catalog = self._catalog()
        return {
            "models": [
                {**asdict(model), "lot_prices_cents": {str(d): p for d, p in model.lot_prices_cents.items()}}
                for model in catalog.models.values()
            ],
            "durations_days": list(DURATIONS_DAYS),
            "lots": {"min": MIN_LOTS, "max": MAX_LOTS},
            "preparations": [asdict(prep) for prep in catalog.preparations.values()],
        }

    @rpc(expected_exceptions=ServiceError)
    def quote(self, model, duration_days, lots, preparation) -> dict:
        return self._catalog().quote(model, duration_days, lots, preparation).model_dump()

    @consumer(CapacityChanged.source, CapacityChanged.type)
    def on_capacity_changed(self, payload: dict) -> None:
        apply_capacity(self.units, CapacityChanged.from_message(payload))
        CatalogService._cache = None
