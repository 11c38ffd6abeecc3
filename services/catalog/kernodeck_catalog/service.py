"""The catalog's nameko entrypoints: thin, over the domain and the store."""

from dataclasses import asdict

from nameko.timer import timer

from kernodeck_catalog.domain import DURATIONS_DAYS, MAX_LOTS, MIN_LOTS, Catalog
from kernodeck_catalog.store import SqlCatalog
from kernodeck_catalog.use_cases import apply_capacity, current_catalog
from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import CapacityChanged
from kernodeck_kit.transport.dependencies import Database, Instrumented
from kernodeck_kit.transport.events import batch_consumer
from kernodeck_kit.transport.rpc import rpc
from kernodeck_kit.units import SqlUnits

# Every request reads the replica's copy of the catalog, loaded again off the requests' path: at once by the
# replica that applied a capacity event, and every REFRESH_SECONDS by each replica, as an event reaches one.
REFRESH_SECONDS = 1.0


class CatalogService:
    name = "catalog"

    db = Database()
    instrumented = Instrumented()

    _cache: Catalog | None = None

    @property
    def units(self) -> SqlUnits:
        return SqlUnits(self.db, SqlCatalog)

    def _catalog(self) -> Catalog:
        if CatalogService._cache is None:
            self.refresh_catalog()
        return CatalogService._cache

    @timer(interval=REFRESH_SECONDS, eager=True)
    def refresh_catalog(self) -> None:
        CatalogService._cache = current_catalog(self.units)

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

    # Every new hold changes the lots held: counts come in bursts when customers arrive together. Those that came
    # while the handler was busy are applied in one unit, and the catalog loaded again once for them all.
    @batch_consumer(CapacityChanged)
    def on_capacity_changed(self, payloads: list[dict]) -> None:
        apply_capacity(self.units, [CapacityChanged.from_message(payload) for payload in payloads])
        self.refresh_catalog()
