"""NUL, a lone surrogate and forged paging cursors sent everywhere they can go: into every path, query and
JSON body field of every route of the gateway's OpenAPI document, into every argument of every RPC method
of every service behind it, and as the cursor of every paged route. Each is refused with 422
`validation_error`, never a 500, on PostgreSQL and the real broker."""

import asyncio
import base64
import inspect
import json
from urllib.parse import quote

import httpx
import pytest
from nameko.extensions import ENTRYPOINT_EXTENSIONS_ATTR

from kernodeck_accounts.service import AccountsService
from kernodeck_catalog.service import CatalogService
from kernodeck_gateway.openapi import document
from kernodeck_gateway.rpc import RemoteError, RpcClient
from kernodeck_orders.service import OrdersService
from kernodeck_payments.service import PaymentsService
from kernodeck_provisioning.service import ProvisioningService
from kernodeck_support.service import SupportService
from tests.e2e.conftest import assert_problem
from tests.e2e.test_payments_http import new_operator

UNSTORABLE = ["a\x00b", "a\ud800b"]
DOCUMENT = document()
OPERATIONS = [
    (method.upper(), path, operation)
    for path, operations in DOCUMENT["paths"].items()
    for method, operation in operations.items()
]
SERVICES = [AccountsService, CatalogService, OrdersService, PaymentsService, ProvisioningService, SupportService]


def cursor_of(*values) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(values)).encode()).decode().rstrip("=")


A_TIME = {"t": "2026-01-01T00:00:00+00:00"}
FORGED_CURSORS = [
    cursor_of(1, 2),
    cursor_of("x", "y"),
    cursor_of(A_TIME, 7),
    cursor_of(A_TIME),
    cursor_of({"t": "2026-01-01T00:00:00"}, "i"),
    cursor_of(A_TIME, "i\x00"),
    cursor_of(2**64),
    cursor_of("x"),
    cursor_of(A_TIME, ["i"]),
    "not-base64!",
]


def not_in_a_url(text: str) -> bool:
    return any("\ud800" <= character <= "\udfff" for character in text)


def resolved(schema: dict) -> dict:
    while "$ref" in schema:
        schema = DOCUMENT["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def with_text(operation: dict, path: str, text: str) -> tuple[str, dict, dict | None]:
    """The route's URL, query and JSON body with `text` in every path parameter, query parameter and body
    field it declares (a URL cannot carry a lone surrogate: no UTF-8 spells it; JSON's escape can)."""
    parameters = [p for p in operation.get("parameters", []) if not not_in_a_url(text)]
    for parameter in parameters:
        if parameter["in"] == "path":
            path = path.replace("{" + parameter["name"] + "}", quote(text))
    query = {p["name"]: text for p in parameters if p["in"] == "query"}
    body_schema = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    body = None
    if body_schema is not None:
        body = dict.fromkeys(resolved(body_schema).get("properties") or {"field": None}, text)
    return path, query, body


@pytest.fixture(scope="module")
def operator(stack):
    with httpx.Client(base_url=stack.url, timeout=10) as client:
        return new_operator(stack, client)


def send(client: httpx.Client, method: str, path: str, query: dict, body, headers: dict) -> httpx.Response:
    content = None if body is None else json.dumps(body).encode()  # ensure_ascii: "\ud800" stays an escape
    headers = {**headers, "content-type": "application/json"}
    return client.request(method, path, params=query, content=content, headers=headers)


@pytest.mark.parametrize("text", UNSTORABLE, ids=["nul", "lone-surrogate"])
@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
def test_every_route_refuses_unstorable_text_in_everything_it_takes(client, operator, text, method, path, operation):
    url, query, body = with_text(operation, path, text)
    if url == path and not query and body is None:
        pytest.skip("takes no text")
    response = send(client, method, url, query, body, operator["headers"])
    assert_problem(response, 422, "validation_error")


PAGED = [(m, p, o) for m, p, o in OPERATIONS if any(q["name"] == "cursor" for q in o.get("parameters", []))]


def test_the_paged_routes_are_the_lists():
    assert {path for _, path, _ in PAGED} >= {
        "/api/v1/orders",
        "/api/v1/topups",
        "/api/v1/support-requests",
        "/api/v1/admin/reviews",
        "/api/v1/me/ledger",
    }


@pytest.mark.parametrize("cursor", FORGED_CURSORS)
@pytest.mark.parametrize(("method", "path", "operation"), PAGED, ids=[p for _, p, _ in PAGED])
def test_every_paged_route_refuses_a_forged_cursor(client, operator, cursor, method, path, operation):
    response = client.request(method, path, params={"cursor": cursor}, headers=operator["headers"])
    assert_problem(response, 422, "validation_error", "cursor")


def rpc_methods() -> list[tuple[str, str, int]]:
    """(service, method, its parameters) of every RPC entrypoint of every service."""
    found = []
    for service in SERVICES:
        for name, method in inspect.getmembers(service, inspect.isfunction):
            if getattr(method, ENTRYPOINT_EXTENSIONS_ATTR, None):
                parameters = len(inspect.signature(method).parameters) - 1  # self
                if parameters and any(type(e).__name__ == "Rpc" for e in getattr(method, ENTRYPOINT_EXTENSIONS_ATTR)):
                    found.append((service.name, name, parameters))
    return found


def test_every_service_refuses_unstorable_text_in_every_argument_of_every_rpc(stack):
    methods = rpc_methods()
    assert len(methods) > 30 and {service for service, _, _ in methods} == {s.name for s in SERVICES}

    async def refusals() -> list[tuple[str, str, str]]:
        rpc = RpcClient(stack.env["AMQP_URI"], timeout=10, name="fuzz")
        await rpc.connect()
        try:
            answers = []
            for service, method, parameters in methods:
                for text in UNSTORABLE:
                    try:
                        await rpc.call(service, method, *[text] * parameters)
                        answers.append((service, method, "answered"))
                    except RemoteError as error:
                        answers.append((service, method, error.exc_args[0] if error.exc_args else error.exc_type))
            return answers
        finally:
            await rpc.close()

    answers = asyncio.run(refusals())
    assert [answer for answer in answers if answer[2] != "validation_error"] == []
