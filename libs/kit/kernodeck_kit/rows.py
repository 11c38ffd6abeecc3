"""A table's row to a domain object and back, field by field by name: the copy every store writes."""

from dataclasses import fields, is_dataclass
from typing import Any, TypeVar

T = TypeVar("T")


def field_names(kind: type) -> tuple[str, ...]:
    """The fields of a dataclass, or of a pydantic model (an SQLModel row included)."""
    return tuple(f.name for f in fields(kind)) if is_dataclass(kind) else tuple(kind.model_fields)


def values_of(source: Any, kind: type, **given: Any) -> dict[str, Any]:
    """`kind`'s fields, each `source`'s attribute of that name or the value `given` for it (what the two
    keep differently: an enum and its text, a nested object). A given name `kind` lacks is a mistake."""
    names = field_names(kind)
    stray = given.keys() - set(names)
    if stray:
        raise TypeError(f"{kind.__name__} has no field {', '.join(sorted(stray))}")
    return {name: given[name] if name in given else getattr(source, name) for name in names}


def copy_as(kind: type[T], source: Any, **given: Any) -> T:
    """A `kind` made of `values_of(source, kind, **given)`."""
    return kind(**values_of(source, kind, **given))
