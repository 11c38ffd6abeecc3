"""The catalog's nameko entrypoints: thin, over the domain and the store."""

import time
from dataclasses import asdict

from nameko.rpc import rpc

from kernodeck_catalog.domain import DURATIONS_DAYS, MAX_LOTS, MIN_LOTS, Catalog
from kernodeck_catalog.store import load_catalog, set_available_lots
from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import CapacityChanged
from kernodeck_kit.events import consumer
from kernodeck_kit.nameko_deps import Database, Instrumented

# Replicas each keep a copy; capacity events reach one replica, so the copy
# expires quickly rather than waiting for an invalidation that never comes.
CACHE_SECONDS = 1.0


class CatalogService:
    name = "catalog"

    db = Database()
    instrumented = Instrumented()

    _cache: tuple[float, Catalog] | None = None

    def _catalog(self) -> Catalog:
        cached = CatalogService._cache
        if cached is not None and time.monotonic() - cached[0] < CACHE_SECONDS:
            return cached[1]
        with self.db.read() as session:
            catalog = load_catalog(session)
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
        event = CapacityChanged.from_message(payload)
        with self.db.consume("capacity", event) as tx:
            if tx is not None:
                set_available_lots(tx.session, event.model_id, event.available_lots, event.occurred_at)
        CatalogService._cache = None
