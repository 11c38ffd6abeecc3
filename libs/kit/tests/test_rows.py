"""Rows to domain objects and back, by field name."""

from dataclasses import dataclass
from enum import StrEnum

import pytest
from sqlmodel import Field, SQLModel

from kernodeck_kit.rows import copy_as, field_names, values_of

pytestmark = pytest.mark.unit


class Colour(StrEnum):
    RED = "red"


@dataclass
class Thing:
    id: str
    colour: Colour
    size: int = 1


class ThingRow(SQLModel, table=True):
    __tablename__ = "test_rows_things"

    id: str = Field(primary_key=True)
    colour: str
    size: int
    extra: str = "kept apart"


def test_a_row_becomes_a_domain_object_with_what_differs_given():
    row = ThingRow(id="t1", colour="red", size=3)
    thing = copy_as(Thing, row, colour=Colour(row.colour))
    assert thing == Thing("t1", Colour.RED, 3) and isinstance(thing.colour, Colour)


def test_a_domain_object_becomes_a_row_with_the_fields_it_lacks_given():
    row = copy_as(ThingRow, Thing("t1", Colour.RED, 3), colour="red", extra="given")
    assert (row.id, row.colour, row.size, row.extra) == ("t1", "red", 3, "given")
    assert field_names(ThingRow) == ("id", "colour", "size", "extra")


def test_a_missing_attribute_or_a_stray_given_name_is_an_error():
    with pytest.raises(AttributeError):
        copy_as(ThingRow, Thing("t1", Colour.RED), colour="red")  # no `extra` on a Thing
    with pytest.raises(TypeError, match="no field colur"):
        values_of(ThingRow(id="t1", colour="red", size=1), Thing, colur=Colour.RED)
