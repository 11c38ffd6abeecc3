"""Lists in pages, newest first (or oldest first, for a queue), with a stable cursor: the sort key of the
last item shown.

A page is read as `key < cursor` in descending key order (`key > cursor` ascending for oldest first: a
keyset, never an offset), so items added since the first page never shift or repeat the ones after it. The key ends with a unique column (the
id), so equal times never lose an item between two pages. The cursor is opaque to callers: base64url
of the key as JSON.
"""

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import literal, tuple_

from kernodeck_contracts.errors import ServiceError

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


def _encode(key: tuple) -> str:
    plain = [{"t": value.isoformat()} if isinstance(value, datetime) else value for value in key]
    return base64.urlsafe_b64encode(json.dumps(plain, separators=(",", ":")).encode()).decode().rstrip("=")


def _decode(cursor: str, width: int) -> tuple:
    try:
        plain = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(plain, list) or len(plain) != width:
            raise ValueError(cursor)
        return tuple(datetime.fromisoformat(v["t"]) if isinstance(v, dict) else v for v in plain)
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise ServiceError.field("cursor", "cursor is not one this list gave") from None


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
            raise ServiceError.field("cursor", "cursor is not one this list gave")
        return cls(limit, _decode(cursor, width) if cursor else None, oldest_first)

    def select(self, query, *key_columns):
        """`query` narrowed to this page: newest (or oldest) first by `key_columns`, one more row than the
        limit (to know whether a next page exists)."""
        if self.after is not None:
            bound = tuple_(
                *(literal(value, type_=column.type) for column, value in zip(key_columns, self.after, strict=True))
            )
            keys = tuple_(*key_columns)
            query = query.where(keys > bound if self.oldest_first else keys < bound)
        order = key_columns if self.oldest_first else (column.desc() for column in key_columns)
        return query.order_by(*order).limit(self.limit + 1)

    def take(self, items: Sequence, key: Callable[[Any], tuple]) -> Sequence:
        """The same page of items held in memory (tests' units of work)."""
        ordered = sorted(items, key=key, reverse=not self.oldest_first)
        return [item for item in ordered if self.after is None or self._beyond(key(item))][: self.limit + 1]

    def _beyond(self, key: tuple) -> bool:
        return key > self.after if self.oldest_first else key < self.after

    def answer(self, rows: Sequence, key: Callable[[Any], tuple], view: Callable[[Any], Any]) -> dict:
        """{"items": views of this page's rows, "next_cursor": where the next page starts, or None}."""
        shown = rows[: self.limit]
        more = len(rows) > self.limit
        return {"items": [view(row) for row in shown], "next_cursor": _encode(key(shown[-1])) if more else None}
