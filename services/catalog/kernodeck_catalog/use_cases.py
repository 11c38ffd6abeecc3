"""The catalog's use cases, on a unit of work (the database's in the service, plain objects in tests)."""

from typing import Protocol

from kernodeck_catalog.domain import Capacity, Catalog
from kernodeck_contracts.events import CapacityChanged
from kernodeck_kit.units import Units


class CatalogUnit(Protocol):
    def catalog(self) -> Catalog: ...

    def capacity(self, model_id: str) -> Capacity | None: ...

    def set_capacity(self, model_id: str, capacity: Capacity) -> None: ...


def current_catalog(units: Units[CatalogUnit]) -> Catalog:
    with units.transaction() as unit:
        return unit.catalog()


def apply_capacity(units: Units[CatalogUnit], event: CapacityChanged) -> bool:
    """Provisioning's count for one model, applied once and only when newer than the last; True when applied."""
    with units.consume(event) as unit:
        current = unit.capacity(event.model_id) if unit is not None else None
        updated = (
            current.update(event.available_lots, event.held_lots, event.occurred_at) if current is not None else None
        )
        if updated is None:
            return False
        unit.set_capacity(event.model_id, updated)
        return True
