"""The OpenAPI document describes every answer: typed bodies, every error as problem+json, the enforced bounds."""

import pytest
from pydantic import ValidationError

from gateway.tests.rows import order_row, payment_row
from kernodeck_gateway.openapi import document
from kernodeck_gateway.responses import Order, Topup
from kernodeck_gateway.schemas import NewAccount, NewOrder, present_order, present_topup

pytestmark = pytest.mark.unit

DOCUMENT = document()
OPERATIONS = [
    (method.upper(), path, operation)
    for path, operations in DOCUMENT["paths"].items()
    for method, operation in operations.items()
]
UNTYPED = {  # text, SVG and files, not JSON
    ("GET", "/metrics"),
    ("GET", "/api/v1/payments/{payment_id}/qr.svg"),
    ("GET", "/api/v1/resources/diagnostic.py"),
    ("GET", "/api/v1/resources/pilot-project.zip"),
}
PROBLEM = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}


def body_schema(path: str, method: str = "post") -> dict:
    ref = DOCUMENT["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    return DOCUMENT["components"]["schemas"][ref.rsplit("/", 1)[1]]


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_every_success_is_typed_and_every_error_is_a_problem(method, path, operation):
    responses = operation["responses"]
    successes = [status for status in responses if int(status) < 400]
    assert len(successes) == 1
    if (method, path) not in UNTYPED and successes != ["204"]:
        schema = responses[successes[0]]["content"]["application/json"]["schema"]
        assert "$ref" in schema or schema.get("items", {}).get("$ref") or "oneOf" in schema, schema
    errors = {status: response for status, response in responses.items() if int(status) >= 400}
    assert all(response["content"] == PROBLEM for response in errors.values())


def test_errors_follow_from_how_a_route_is_built():
    order = DOCUMENT["paths"]["/api/v1/orders/{order_id}/payments"]["post"]["responses"]
    assert {"400", "401", "403", "404", "409", "413", "422", "429", "503"} == set(order) - {"201"}
    assert set(DOCUMENT["paths"]["/api/v1/me/balance"]["get"]["responses"]) == {"200", "401", "503"}
    assert set(DOCUMENT["paths"]["/api/v1/catalog"]["get"]["responses"]) == {"200", "503"}
    assert set(DOCUMENT["paths"]["/healthz"]["get"]["responses"]) == {"200"}
    assert "HTTPValidationError" not in DOCUMENT["components"]["schemas"]


def test_the_bounds_the_api_enforces_are_in_the_document():
    account = body_schema("/api/v1/accounts")["properties"]
    assert (account["password"]["minLength"], account["password"]["maxLength"]) == (15, 128)
    assert account["first_name"]["maxLength"] == 100
    order = body_schema("/api/v1/orders")["properties"]
    assert (order["lots"]["minimum"], order["lots"]["maximum"]) == (1, 10)
    assert order["duration_days"]["enum"] == [3, 7, 30]
    assert body_schema("/api/v1/topups")["properties"]["amount_usd"]["pattern"]
    assert body_schema("/api/v1/accounts")["additionalProperties"] is False


@pytest.mark.parametrize(
    ("field", "value", "valid"), [("lots", 1, True), ("lots", 10, True), ("lots", 0, False), ("lots", 11, False)]
)
def test_the_lot_bounds_hold_on_both_sides(field, value, valid):
    body = {"model": "h100", "duration_days": 7, "lots": 1, "preparation": "ubuntu", field: value}
    if valid:
        NewOrder.model_validate(body)
    else:
        with pytest.raises(ValidationError):
            NewOrder.model_validate(body)


@pytest.mark.parametrize(("length", "valid"), [(14, False), (15, True), (128, True), (129, False)])
def test_the_password_bounds_hold_on_both_sides(length, valid):
    body = {"first_name": "Lan", "last_name": "Nguyen", "email": "lan@example.org", "password": "p" * length}
    if valid:
        NewAccount.model_validate(body)
    else:
        with pytest.raises(ValidationError):
            NewAccount.model_validate(body)


def test_presented_answers_match_their_models_and_nothing_more():
    entry = {"at": "2025-01-01T00:00:00Z", "kind": "ready", "code": "ready", "params": {"ends_at": "x"}, "detail": "d"}
    credited = {"credits": [{"at": "2025-01-01T02:00:00Z", "amount_usd_cents": 1234, "reason": "overpayment"}],
                "reviews": [{"status": "open", "decision": None}]}  # fmt: skip
    order = present_order(order_row(timeline=[entry]), [payment_row(outcome=credited)])
    Order.model_validate(order)
    assert order["payments"][0]["credits"] == [
        {"at": "2025-01-01T02:00:00Z", "amount_usd": "12.34", "reason": "overpayment"}
    ]
    Topup.model_validate(
        present_topup(
            {
                "id": "t1",
                "amount_usd_cents": 10000,
                "status": "credited",
                "created_at": "2025-01-01T00:00:00Z",
                "payment": payment_row(purpose="topup", order_id=None, topup_id="t1"),
            }
        )
    )
    with pytest.raises(ValidationError):  # a code the contracts do not declare
        Order.model_validate(present_order(order_row(timeline=[{**entry, "code": "said_in_english"}]), []))
    with pytest.raises(ValidationError):
        Order.model_validate({**present_order(order_row(), []), "account_id": "a1"})
