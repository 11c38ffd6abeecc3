"""Pages by key, newest or oldest first, with a stable cursor: the rules, in memory and as SQL."""

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Column, DateTime, Integer, String, create_engine, insert, select
from sqlalchemy.orm import declarative_base

from kernodeck_contracts.errors import ServiceError
from kernodeck_kit.paging import Page

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, tzinfo=UTC)
# Three share a time: the id orders them.
ITEMS = [(T0 + timedelta(minutes=n // 2), f"i{n}") for n in range(7)]


def key(item):
    return item


def pages(read, limit: int, oldest_first: bool = False) -> list[list]:
    shown, cursor = [], None
    while True:
        page = Page.ask(limit, cursor, oldest_first=oldest_first)
        answer = page.answer(read(page), key, lambda item: item)
        shown.append(answer["items"])
        cursor = answer["next_cursor"]
        if cursor is None:
            return shown


def test_pages_in_memory_cover_every_item_once_newest_first():
    assert pages(lambda page: page.take(ITEMS, key), 3) == [ITEMS[:-4:-1], ITEMS[-4:-7:-1], ITEMS[:1]]
    assert pages(lambda page: page.take(ITEMS, key), 7) == [ITEMS[::-1]]
    assert pages(lambda page: page.take([], key), 7) == [[]]


def test_pages_oldest_first_cover_every_item_once_in_order():
    assert pages(lambda page: page.take(ITEMS, key), 3, oldest_first=True) == [ITEMS[:3], ITEMS[3:6], ITEMS[6:]]


def test_items_added_after_the_first_page_shift_nothing():
    items = list(ITEMS)
    first = Page.ask(3).answer(Page.ask(3).take(items, key), key, lambda item: item)
    items.append((T0 + timedelta(hours=1), "newer"))
    second = Page.ask(3, first["next_cursor"])
    assert second.answer(second.take(items, key), key, lambda item: item)["items"] == ITEMS[-4:-7:-1]


Base = declarative_base()


class Row(Base):
    __tablename__ = "rows"
    number = Column(Integer, primary_key=True)
    at = Column(DateTime(timezone=True), nullable=False)
    id = Column(String, nullable=False)


def test_pages_in_sql_are_the_same_pages():
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(insert(Row), [{"at": at, "id": id_} for at, id_ in ITEMS])

    def read(page: Page) -> list:
        with engine.connect() as connection:
            rows = connection.execute(page.select(select(Row.at, Row.id), Row.at, Row.id)).all()
        return [(at.replace(tzinfo=UTC), id_) for at, id_ in rows]

    assert pages(read, 3) == [ITEMS[:-4:-1], ITEMS[-4:-7:-1], ITEMS[:1]]
    assert pages(read, 3, oldest_first=True) == [ITEMS[:3], ITEMS[3:6], ITEMS[6:]]


@pytest.mark.parametrize("limit", [1, 200, None])
def test_limits_of_1_to_200_are_taken_50_when_absent(limit):
    assert Page.ask(limit).limit == (limit or 50)


@pytest.mark.parametrize("limit", [0, 201, "5", 2.0, True])
def test_other_limits_are_refused(limit):
    with pytest.raises(ServiceError) as refused:
        Page.ask(limit)
    assert refused.value.errors == [{"field": "limit", "message": "limit is 1 to 200"}]


@pytest.mark.parametrize("cursor", ["forged", "W10", "WyJ4Il0", 12, "WyJhIiwiYiIsImMiXQ"])
def test_a_cursor_no_list_gave_is_refused(cursor):
    with pytest.raises(ServiceError) as refused:
        Page.ask(10, cursor)
    assert refused.value.errors[0]["field"] == "cursor"


def cursor_of(*values) -> str:
    """A cursor as a client could forge one: base64url of any JSON list."""
    return base64.urlsafe_b64encode(json.dumps(list(values)).encode()).decode().rstrip("=")


A_TIME = {"t": "2026-01-01T00:00:00+00:00"}
WRONG_KEYS = [
    cursor_of({"t": "2026-01-01T00:00:00"}, "i1"),  # a naive time
    cursor_of({"t": "0001-01-01T00:00:00+01:00"}, "i1"),  # a time before year 1 in UTC
    cursor_of({"t": 5}, "i1"),
    cursor_of({"t": "2026-01-01T00:00:00+00:00", "x": 1}, "i1"),
    cursor_of(A_TIME, None),
    cursor_of(A_TIME, 1.5),
    cursor_of(A_TIME, True),
    cursor_of(A_TIME, ["i1"]),
    cursor_of(A_TIME, "i\u0000"),  # NUL, which PostgreSQL cannot compare
    cursor_of(A_TIME, "\ud800"),
    cursor_of(A_TIME, 2**63),  # beyond a 64-bit integer
    cursor_of(A_TIME, "i1", "extra"),
]


@pytest.mark.parametrize("cursor", WRONG_KEYS)
def test_a_cursor_decoding_to_values_no_key_holds_is_refused(cursor):
    with pytest.raises(ServiceError) as refused:
        Page.ask(10, cursor)
    assert refused.value.errors[0]["field"] == "cursor"


@pytest.mark.parametrize(
    ("cursor", "width"),
    [(cursor_of(A_TIME, "i1"), 2), (cursor_of(2**63 - 1), 1), (cursor_of(-(2**63)), 1), (cursor_of("x"), 1)],
)
def test_a_cursor_of_storable_values_up_to_their_bounds_is_taken(cursor, width):
    assert Page.ask(10, cursor, width=width).after is not None


@pytest.mark.parametrize(
    "cursor",
    [
        cursor_of(1, 2),  # numbers where a time and an id go
        cursor_of("2026-01-01", "i1"),  # a time without its envelope
        cursor_of("i1", A_TIME),
        cursor_of(A_TIME, 7),
    ],
)
def test_a_cursor_of_another_list_s_types_is_refused_before_any_query(cursor):
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    page = Page.ask(10, cursor)
    with pytest.raises(ServiceError) as refused:
        page.select(select(Row.at, Row.id), Row.at, Row.id)
    assert refused.value.errors[0]["field"] == "cursor"
    with pytest.raises(ServiceError):
        page.take(ITEMS, key)


def test_an_integer_key_takes_an_integer_cursor_only():
    assert Page.ask(10, cursor_of(5), width=1).select(select(Row.number), Row.number) is not None
    with pytest.raises(ServiceError):
        Page.ask(10, cursor_of("5"), width=1).select(select(Row.number), Row.number)
