"""For tests: the base of a service's unit of work on plain objects (run by `units.MemoryUnits`).

Its tables are a dataclass of dicts, one per table, by key. Reads hand out copies and writes keep copies,
as a database would: a change made on what was read is kept only when it is saved.
"""

from collections.abc import Callable, Hashable
from copy import deepcopy
from typing import Any, Generic, TypeVar

from kernodeck_contracts.events import Event
from kernodeck_kit.paging import Page

S = TypeVar("S")
T = TypeVar("T")


class MemoryUnit(Generic[S]):
    """`tables`, the service's tables as plain objects, and `emit`, as `MemoryUnits` hands them over."""

    def __init__(self, tables: S, emit: Callable[[Event], None]):
        self.tables = tables
        self.emit = emit

    @staticmethod
    def put(table: dict, item: Any, key: Hashable | None = None) -> None:
        """Keep a copy of `item` under `key` (its `id` when None)."""
        table[item.id if key is None else key] = deepcopy(item)

    @staticmethod
    def read(table: dict[Any, T], key: Hashable) -> T | None:
        return deepcopy(table.get(key))

    @staticmethod
    def where(table: dict[Any, T], keep: Callable[[T], bool]) -> list[T]:
        """Copies of the items `keep` keeps, in the order they were put."""
        return deepcopy([item for item in table.values() if keep(item)])

    @staticmethod
    def page(table: dict[Any, T], page: Page, sort_key: Callable[[T], tuple], where: Callable[[T], bool]) -> list[T]:
        """Copies of one page of the items `where` keeps, in the page's order (kernodeck_kit.paging)."""
        return deepcopy(list(page.take([item for item in table.values() if where(item)], sort_key)))
