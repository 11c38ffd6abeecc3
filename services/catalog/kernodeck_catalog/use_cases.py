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


def apply_capacity(units: Units[CatalogUnit], events: list[CapacityChanged]) -> int:
    """Provisioning's counts that came together, in one unit: each applied once, and only when newer than the
    model's last (whatever order they came in); how many were applied."""
    applied = 0
    with units.consume_each(events) as (unit, fresh):
        for event in fresh:
            current = unit.capacity(event.model_id)
            updated = current.update(event.available_lots, event.held_lots, event.occurred_at) if current else None
            if updated is not None:
                unit.set_capacity(event.model_id, updated)
                applied += 1
    return applied
