"""Every product rule on both sides of its boundary, through HTTP: 4xx problem+json, never 5xx."""

import json

import pytest

from tests.e2e.conftest import assert_problem, new_customer

VALID = {"model": "h100", "duration_days": 7, "lots": 1, "preparation": "ubuntu"}


@pytest.mark.parametrize("path", ["/api/v1/quotes", "/api/v1/orders"])
@pytest.mark.parametrize("lots", [1, 10])
def test_lots_1_and_10_are_accepted(client, customer, path, lots):
    response = client.post(path, json={**VALID, "lots": lots}, headers=customer["headers"])
    assert response.status_code in (200, 201), response.text
    assert response.json()["summary" if path.endswith("orders") else "lots"] is not None


@pytest.mark.parametrize("path", ["/api/v1/quotes", "/api/v1/orders"])
@pytest.mark.parametrize("lots", [0, 11])
def test_lots_0_and_11_are_refused(client, customer, path, lots):
    response = client.post(path, json={**VALID, "lots": lots}, headers=customer["headers"])
    assert_problem(response, 422, "validation_error", "lots")


@pytest.mark.parametrize("days", [3, 7, 30])
def test_durations_3_7_30_are_accepted(client, days):
    assert client.post("/api/v1/quotes", json={**VALID, "duration_days": days}).status_code == 200


@pytest.mark.parametrize("days", [2, 31])
def test_durations_2_and_31_are_refused(client, customer, days):
    assert_problem(
        client.post("/api/v1/quotes", json={**VALID, "duration_days": days}), 422, "validation_error", "duration_days"
    )
    response = client.post("/api/v1/orders", json={**VALID, "duration_days": days}, headers=customer["headers"])
    assert_problem(response, 422, "validation_error", "duration_days")


@pytest.mark.parametrize(("field", "value"), [("model", "tpu-v5"), ("preparation", "windows")])
def test_unknown_model_or_preparation(client, field, value):
    assert_problem(client.post("/api/v1/quotes", json={**VALID, field: value}), 422, "validation_error", field)


@pytest.mark.parametrize(("field", "value"), [("lots", "2"), ("lots", 2.0), ("lots", True), ("duration_days", None)])
def test_wrong_json_types(client, field, value):
    assert_problem(client.post("/api/v1/quotes", json={**VALID, field: value}), 422, "validation_error", field)


def test_missing_field(client):
    body = {k: v for k, v in VALID.items() if k != "preparation"}
    assert_problem(client.post("/api/v1/quotes", json=body), 422, "validation_error", "preparation")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/v1/quotes", {**VALID, "discount": "100"}),
        (
            "/api/v1/accounts",
            {"first_name": "A", "last_name": "B", "email": "a@b.org", "password": "x" * 20, "role": "operator"},
        ),
        ("/api/v1/sessions", {"email": "a@b.org", "password": "x" * 20, "remember": True}),
    ],
)
def test_unknown_fields_are_refused(client, path, body):
    extra = (
        set(body) - {"model", "duration_days", "lots", "preparation", "first_name", "last_name", "email", "password"}
    ).pop()
    assert_problem(client.post(path, json=body), 422, "validation_error", extra)


def test_malformed_json(client):
    response = client.post("/api/v1/quotes", content=b'{"model": "h100",', headers={"content-type": "application/json"})
    assert_problem(response, 400, "validation_error")


def test_oversized_body(client):
    body = json.dumps({**VALID, "padding": "x" * 200_000})
    response = client.post("/api/v1/quotes", content=body, headers={"content-type": "application/json"})
    assert_problem(response, 413, "payload_too_large")


def test_oversized_chunked_body_without_length(client):
    def chunks():
        yield b'{"model": "'
        for _ in range(100):
            yield b"x" * 4096
        yield b'"}'

    response = client.post("/api/v1/quotes", content=chunks(), headers={"content-type": "application/json"})
    assert_problem(response, 413, "payload_too_large")


def password_body(length: int) -> dict:
    return {
        "first_name": "Minh",
        "last_name": "Tran",
        "email": f"p{length}-{id(object())}@example.org",
        "password": "p" * length,
    }


@pytest.mark.parametrize("length", [15, 128])
def test_password_of_15_and_128_characters_is_accepted(client, length):
    assert client.post("/api/v1/accounts", json=password_body(length)).status_code == 201


@pytest.mark.parametrize("length", [14, 129])
def test_password_of_14_and_129_characters_is_refused(client, length):
    assert_problem(client.post("/api/v1/accounts", json=password_body(length)), 422, "validation_error", "password")


def test_password_length_counts_characters_not_bytes(client):
    body = {**password_body(0), "password": "mật khẩu dài đủ"}  # 15 characters, more bytes
    assert len(body["password"]) == 15
    assert client.post("/api/v1/accounts", json=body).status_code == 201


def test_unknown_route_is_a_problem(client):
    assert_problem(client.get("/api/v1/nothing-here"), 404, "not_found")


def test_an_order_without_login_is_401(client):
    assert_problem(client.post("/api/v1/orders", json=VALID), 401, "unauthenticated")


def test_an_order_over_capacity_is_refused_before_payment(client):
    customer = new_customer(client)
    b200 = next(m for m in client.get("/api/v1/catalog").json()["models"] if m["id"] == "b200")
    assert b200["available_lots"] < 10, "the seeded catalog must leave room to exceed B200 capacity"
    too_many = {**VALID, "model": "b200", "lots": b200["available_lots"] + 1}
    assert client.post("/api/v1/quotes", json=too_many).json()["available"] is False
    assert_problem(client.post("/api/v1/orders", json=too_many, headers=customer["headers"]), 409, "out_of_capacity")
