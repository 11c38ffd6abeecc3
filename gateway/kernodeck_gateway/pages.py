"""Paged lists (API.md "Lists"): `?limit=` 1 to 200 (50 when absent) and `?cursor=`, the previous page's
`next_cursor`, opaque; the answer is {"items", "next_cursor"}, null on the last page. The services read
their pages by key (newest first), so a cursor stays valid and nothing shifts as items are added."""

from collections.abc import Callable
from typing import Annotated, Generic, TypeVar

from fastapi import Query

from kernodeck_gateway.responses import Answer

Limit = Annotated[int | None, Query(ge=1, le=200, description="items per page (50 when absent)")]
Cursor = Annotated[str | None, Query(max_length=512, description="the previous page's next_cursor")]

Item = TypeVar("Item")


class Page(Answer, Generic[Item]):
    """One page of a list, newest first; `next_cursor` (null on the last page) asks for the next."""

    items: list[Item]
    next_cursor: str | None


def present_page(page: dict, present: Callable[[dict], dict]) -> dict:
    """A service's page with each item presented."""
    return {"items": [present(item) for item in page["items"]], "next_cursor": page["next_cursor"]}
