"""The in-memory unit's tables: copies in and out, pages, and a transaction's rollback (MemoryUnits)."""

from dataclasses import dataclass, field

import pytest

from kernodeck_kit.memory import MemoryUnit
from kernodeck_kit.paging import Page
from kernodeck_kit.units import MemoryUnits

pytestmark = pytest.mark.unit


@dataclass
class Item:
    id: str
    owner: str
    at: int
    tags: list[str] = field(default_factory=list)


@dataclass
class Tables:
    items: dict[str, Item] = field(default_factory=dict)


class Unit(MemoryUnit[Tables]):
    def add(self, item: Item) -> None:
        self.put(self.tables.items, item)

    def get(self, item_id: str) -> Item | None:
        return self.read(self.tables.items, item_id)

    def of(self, owner: str, page: Page) -> list[Item]:
        return self.page(self.tables.items, page, lambda i: (i.at, i.id), lambda i: i.owner == owner)

    def all_of(self, owner: str) -> list[Item]:
        return self.where(self.tables.items, lambda i: i.owner == owner)


@pytest.fixture
def units():
    units = MemoryUnits("orders", Tables(), Unit)
    with units.transaction() as unit:
        for n, owner in enumerate(["a", "b", "a", "a"]):
            unit.add(Item(f"i{n}", owner, at=n))
    return units


def test_reads_and_writes_are_copies_kept_only_when_saved(units):
    with units.transaction() as unit:
        read = unit.get("i0")
        read.tags.append("changed, not saved")
        shown = unit.of("a", Page.ask())[0]
        shown.tags.append("changed, not saved")
        unit.all_of("a")[0].tags.append("changed, not saved")
        assert unit.get("i0").tags == [] and unit.get("i3").tags == [] and unit.get("missing") is None
        read.tags = ["saved"]
        unit.add(read)
        read.tags.append("after the save")
    assert units.state.items["i0"].tags == ["saved"]


def test_a_page_keeps_what_where_keeps_in_the_page_order(units):
    with units.transaction() as unit:
        assert [i.id for i in unit.of("a", Page.ask(2))] == ["i3", "i2", "i0"]  # one more: a next page exists
        assert [i.id for i in unit.of("a", Page.ask(5, oldest_first=True))] == ["i0", "i2", "i3"]
        assert unit.of("c", Page.ask()) == []


def test_where_keeps_the_items_it_is_told_in_the_order_they_were_put(units):
    with units.transaction() as unit:
        unit.add(Item("i9", "a", at=-1))
        assert [i.id for i in unit.all_of("a")] == ["i0", "i2", "i3", "i9"]
        assert unit.all_of("c") == []


def test_a_failed_transaction_keeps_nothing(units):
    with pytest.raises(RuntimeError), units.transaction() as unit:
        unit.add(Item("i9", "a", at=9))
        raise RuntimeError("rolled back")
    assert "i9" not in units.state.items
