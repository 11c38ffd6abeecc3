"""The catalog's unit of work on plain objects: its use cases run here without a database."""

from dataclasses import dataclass, field, replace

from kernodeck_catalog.domain import Capacity, Catalog
from kernodeck_kit.memory import MemoryUnit
from kernodeck_kit.units import MemoryUnits


@dataclass
class CatalogTables:
    catalog: Catalog
    capacities: dict[str, Capacity] = field(default_factory=dict)


class MemoryCatalog(MemoryUnit[CatalogTables]):
    def catalog(self) -> Catalog:
        models = {
            model_id: replace(
                model,
                available_lots=self.capacity(model_id).available_lots,
                held_lots=self.capacity(model_id).held_lots,
            )
            for model_id, model in self.tables.catalog.models.items()
        }
        return replace(self.tables.catalog, models=models)

    def capacity(self, model_id: str) -> Capacity | None:
        model = self.tables.catalog.models.get(model_id)
        if model is None:
            return None
        return self.tables.capacities.get(model_id, Capacity(model.available_lots))

    def set_capacity(self, model_id: str, capacity: Capacity) -> None:
        self.tables.capacities[model_id] = capacity


def memory_units(catalog: Catalog) -> MemoryUnits:
    return MemoryUnits("catalog", CatalogTables(catalog), MemoryCatalog)
