"""Text nothing can store (a lone surrogate, NUL) and control characters in names and emails, anywhere
a request can carry them: 422 problem+json, never a 500; letters of every script and emoji still pass."""

import json
import uuid

import pytest

from tests.e2e.conftest import assert_problem

PASSWORD = "correct horse battery staple"


def account(**change) -> dict:
    email = f"b{uuid.uuid4().hex[:10]}@example.org"
    return {"first_name": "Lan", "last_name": "Nguyen", "email": email, "password": PASSWORD, **change}


def post_raw(client, path: str, body: dict, **kwargs):
    """The body as JSON with non-ASCII escaped, as a client may send it: "\\ud800" stays a lone surrogate."""
    content = json.dumps(body, ensure_ascii=True).encode()
    return client.post(path, content=content, headers={"content-type": "application/json", **kwargs})


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: text.encode("utf-8", "surrogatepass"),  # the surrogate's own bytes, no escape
        lambda text: text.encode("utf-16", "surrogatepass"),
        lambda text: text.encode("utf-32", "surrogatepass"),
    ],
)
def test_a_lone_surrogate_spelled_without_an_escape_is_422(client, customer, encode):
    content = encode(json.dumps({"email": customer["email"], "password": "x\ud800" * 8}, ensure_ascii=False))
    response = client.post("/api/v1/sessions", content=content, headers={"content-type": "application/json"})
    assert_problem(response, 422, "validation_error", "password")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"password": "correct horse \ud800 staple"}, "password"),
        ({"first_name": "Lan\udfff"}, "first_name"),
        ({"last_name": "Ng\x00uyen"}, "last_name"),
        ({"email": "lan\ud83d@example.org"}, "email"),
    ],
)
def test_a_lone_surrogate_or_nul_in_a_registration_is_422(client, change, field):
    assert_problem(post_raw(client, "/api/v1/accounts", account(**change)), 422, "validation_error", field)


def test_a_lone_surrogate_in_a_field_name_is_422_and_named_escaped(client):
    body = {**account(), "\ud800": "x"}
    problem = assert_problem(post_raw(client, "/api/v1/accounts", body), 422, "validation_error")
    assert problem["errors"] == [{"field": "\\ud800", "message": "must not contain NUL or lone surrogates"}]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"first_name": "Lan\tAnh"}, "first_name"),
        ({"last_name": "Nguyen\x1b[31m"}, "last_name"),
        ({"last_name": "Nguyen\x85"}, "last_name"),
        ({"email": "lan\x7f@example.org"}, "email"),
    ],
)
def test_control_characters_in_names_and_emails_are_422(client, change, field):
    assert_problem(post_raw(client, "/api/v1/accounts", account(**change)), 422, "validation_error", field)


def test_names_in_any_script_with_emoji_register(client):
    names = {"first_name": "Zoë 😀", "last_name": "Nguyễn-Đặng"}
    registered = post_raw(client, "/api/v1/accounts", account(**names))
    assert registered.status_code == 201, registered.text
    assert {k: registered.json()[k] for k in names} == names


def test_a_lone_surrogate_in_a_login_is_422(client, customer):
    response = post_raw(client, "/api/v1/sessions", {"email": customer["email"], "password": "x\ud800" * 8})
    assert_problem(response, 422, "validation_error", "password")


@pytest.mark.parametrize("path", ["/api/v1/orders/%00", "/api/v1/payments/%00", "/api/v1/orders/a%00b/cancel"])
def test_nul_in_a_path_is_422(client, customer, path):
    method = client.post if path.endswith("cancel") else client.get
    assert_problem(method(path, headers=customer["headers"]), 422, "validation_error")


def test_nul_in_a_query_is_422(client, customer):
    assert_problem(client.get("/api/v1/orders?limit=%00", headers=customer["headers"]), 422, "validation_error")


def test_nul_in_an_order_note_is_422(client, customer):
    order = {"model": "h100", "duration_days": 7, "lots": 1, "preparation": "custom", "preparation_note": "a\x00b"}
    response = post_raw(client, "/api/v1/orders", order, **customer["headers"])
    assert_problem(response, 422, "validation_error", "preparation_note")


@pytest.mark.parametrize(
    "content_type", ["application/JSON", "APPLICATION/Json; charset=UTF-8", "application/vnd.kernodeck+JSON"]
)
def test_nul_in_a_json_body_of_any_spelling_of_its_media_type_is_422(client, customer, content_type):
    order = {"model": "h100", "duration_days": 7, "lots": 1, "preparation": "custom", "preparation_note": "a\x00b"}
    response = post_raw(client, "/api/v1/orders", order, **customer["headers"], **{"content-type": content_type})
    assert_problem(response, 422, "validation_error", "preparation_note")
