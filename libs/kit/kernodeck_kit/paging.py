"""Lists in pages, newest first (or oldest first, for a queue), with a stable cursor: the sort key of the
last item shown.

A page is read as `key < cursor` in descending key order (`key > cursor` ascending for oldest first: a
keyset, never an offset), so items added since the first page never shift or repeat the ones after it. The key ends with a unique column (the
id), so equal times never lose an item between two pages. The cursor is opaque to callers: base64url
of the key as JSON. A cursor is taken only when it decodes to a key of the list's own types (aware times,
64-bit integers, storable strings, as its columns hold): anything else is a validation error on `cursor`,
never a query that fails.
"""

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Integer, String, literal, tuple_
from sqlalchemy.types import TypeDecorator

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.text import unstorable

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


def _encode(key: tuple) -> str:
    plain = [{"t": value.isoformat()} if isinstance(value, datetime) else value for value in key]
    return base64.urlsafe_b64encode(json.dumps(plain, separators=(",", ":")).encode()).decode().rstrip("=")


def _not_given() -> ServiceError:
    return ServiceError.field("cursor", "cursor is not one this list gave")


def _value(plain) -> datetime | int | str:
    """One value of a key as `_encode` wrote it; ValueError for any other."""
    if isinstance(plain, dict) and plain.keys() == {"t"} and isinstance(plain["t"], str):
        at = datetime.fromisoformat(plain["t"])
        if at.tzinfo is None:
            raise ValueError("a naive time")
        return at.astimezone(UTC)
    if isinstance(plain, int) and not isinstance(plain, bool) and -(2**63) <= plain < 2**63:
        return plain
    if isinstance(plain, str) and not unstorable(plain):
        return plain
    raise ValueError("not a key's value")


def _decode(cursor: str, width: int) -> tuple:
    try:
        plain = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(plain, list) or len(plain) != width:
            raise ValueError(cursor)
        return tuple(_value(value) for value in plain)
    except (ValueError, TypeError, OverflowError, binascii.Error, UnicodeDecodeError):
        raise _not_given() from None


def _python_type(column) -> type | None:
    """What a key column holds in Python: datetime, int or str (None: any)."""
    column_type = column.type.impl if isinstance(column.type, TypeDecorator) else column.type
    for sql_type, python_type in ((DateTime, datetime), (Integer, int), (String, str)):
        if isinstance(column_type, sql_type):
            return python_type
    return None


def _same_types(key: tuple, expected: tuple[type | None, ...]) -> bool:
    return all(kind is None or isinstance(value, kind) for value, kind in zip(key, expected, strict=True))


@dataclass(frozen=True)
class Page:
    """What a caller asked for: at most `limit` items after `after` (the previous page's last key)."""

    limit: int
    after: tuple | None
    oldest_first: bool = False

    @classmethod
    def ask(cls, limit: Any = None, cursor: Any = None, width: int = 2, oldest_first: bool = False) -> "Page":
        """`limit` 1 to 200 (None: 50) and `cursor` as given by the previous page (None: the first page);
        `width`: how many values the list's key has. A bad one is a validation error naming it."""
        if limit is None:
            limit = DEFAULT_LIMIT
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise ServiceError.field("limit", f"limit is 1 to {MAX_LIMIT}")
        if cursor is not None and not isinstance(cursor, str):
            raise _not_given()
        return cls(limit, _decode(cursor, width) if cursor else None, oldest_first)

    def select(self, query, *key_columns):
        """`query` narrowed to this page: newest (or oldest) first by `key_columns`, one more row than the
        limit (to know whether a next page exists)."""
        if self.after is not None:
            if not _same_types(self.after, tuple(_python_type(column) for column in key_columns)):
                raise _not_given()
            bound = tuple_(
                *(literal(value, type_=column.type) for column, value in zip(key_columns, self.after, strict=True))
            )
            keys = tuple_(*key_columns)
            query = query.where(keys > bound if self.oldest_first else keys < bound)
        order = key_columns if self.oldest_first else (column.desc() for column in key_columns)
        return query.order_by(*order).limit(self.limit + 1)

    def take(self, items: Sequence, key: Callable[[Any], tuple]) -> Sequence:
        """The same page of items held in memory (tests' units of work)."""
        if self.after is not None and items and not _same_types(self.after, tuple(map(type, key(items[0])))):
            raise _not_given()
        ordered = sorted(items, key=key, reverse=not self.oldest_first)
        return [item for item in ordered if self.after is None or self._beyond(key(item))][: self.limit + 1]

    def _beyond(self, key: tuple) -> bool:
        return key > self.after if self.oldest_first else key < self.after

    def answer(self, rows: Sequence, key: Callable[[Any], tuple], view: Callable[[Any], Any]) -> dict:
        """{"items": views of this page's rows, "next_cursor": where the next page starts, or None}."""
        shown = rows[: self.limit]
        more = len(rows) > self.limit
        return {"items": [view(row) for row in shown], "next_cursor": _encode(key(shown[-1])) if more else None}
