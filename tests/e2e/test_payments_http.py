"""Payments, top-ups and the balance through HTTP, with the payments service a real process."""

import subprocess
import time
import uuid
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from kombu import Connection, Exchange

from infra.local.stack import BIN
from infra.testhosts.local import TEST_ACCOUNT_KEY
from kernodeck_contracts.events import ChainTransfer, TransferConfirmed
from tests.e2e.conftest import assert_problem, new_customer

ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
METHODS = {
    ("BTC", "bitcoin"),
    ("ETH", "ethereum"),
    ("USDT", "ethereum"),
    ("USDC", "ethereum"),
    ("TRX", "tron"),
    ("USDT", "tron"),
    ("SOL", "solana"),
    ("LTC", "litecoin"),
}
DECIMALS = {"BTC": 8, "LTC": 8, "ETH": 18, "USDT": 6, "USDC": 6, "TRX": 6, "SOL": 9}
PAYMENT_FIELDS = {
    "id",
    "purpose",
    "asset",
    "network",
    "address",
    "amount",
    "amount_base_units",
    "amount_usd",
    "rate",
    "uri",
    "created_at",
    "expires_at",
    "status",
    "reported_at",
    "received",
    "transfers",
    "credits",
    "checks",
}


@pytest.fixture
def method(client) -> dict:
    """An available method, bitcoin when it is: the stack must give it a rate and a watcher."""
    available = [(m["asset"], m["network"]) for m in client.get("/api/v1/payment-methods").json() if m["available"]]
    assert available, "no payment method is available in the stack"
    asset, network = ("BTC", "bitcoin") if ("BTC", "bitcoin") in available else available[0]
    return {"asset": asset, "network": network}


def new_order(client, customer) -> dict:
    created = client.post("/api/v1/orders", json=ORDER, headers=customer["headers"])
    assert created.status_code == 201, created.text
    return created.json()


def pay_by_crypto(client, customer, order, method) -> dict:
    response = client.post(f"/api/v1/orders/{order['id']}/payments", json=method, headers=customer["headers"])
    assert response.status_code == 201, response.text
    return response.json()


def chain_event(stack, event: ChainTransfer) -> None:
    """Publish what a chain watcher would, as the kit's outbox relay does."""
    exchange = Exchange(f"{event.source}.events", type="topic", durable=True)
    with Connection(stack.env["AMQP_URI"]) as connection:
        connection.Producer().publish(
            event.to_message(), exchange=exchange, routing_key=event.type, serializer="json", declare=[exchange]
        )


def eventually(read, until, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not until(value := read()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert until(value), value
    return value


def new_operator(stack, client) -> dict:
    operator = new_customer(client)
    granted = subprocess.run(
        [str(BIN / "kernodeck-admin"), "accounts", "grant-operator", operator["email"]],
        env=stack.process("accounts").env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert granted.returncode == 0, granted.stderr
    return operator


def test_the_eight_methods(client):
    response = client.get("/api/v1/payment-methods")
    assert response.status_code == 200
    methods = response.json()
    assert {(m["asset"], m["network"]) for m in methods} == METHODS
    assert len(methods) == 8
    for m in methods:
        assert set(m) == {"asset", "network", "available", "reason"}
        assert isinstance(m["available"], bool)
        assert (m["reason"] is None) == m["available"], m


@pytest.mark.parametrize(
    ("asset", "network"), [("USDC", "tron"), ("USDT", "solana"), ("BTC", "ethereum"), ("DOGE", "dogecoin")]
)
def test_a_pair_outside_the_eight_is_refused(client, customer, asset, network):
    order = new_order(client, customer)
    pair = {"asset": asset, "network": network}
    response = client.post(f"/api/v1/orders/{order['id']}/payments", json=pair, headers=customer["headers"])
    body = assert_problem(response, 422, "validation_error")
    assert {e["field"] for e in body["errors"]} & {"asset", "network"}
    topup = client.post("/api/v1/topups", json={"amount_usd": "100", **pair}, headers=customer["headers"])
    assert_problem(topup, 422, "validation_error")


def test_a_payment_body_refuses_unknown_fields_and_wrong_types(client, customer, method):
    order = new_order(client, customer)
    path = f"/api/v1/orders/{order['id']}/payments"
    assert_problem(
        client.post(path, json={**method, "amount": "1"}, headers=customer["headers"]),
        422,
        "validation_error",
        "amount",
    )
    assert_problem(
        client.post(path, json={**method, "asset": 1}, headers=customer["headers"]), 422, "validation_error", "asset"
    )


def test_a_payment_intent_for_an_order(client, customer, method):
    order = new_order(client, customer)
    payment = pay_by_crypto(client, customer, order, method)

    assert set(payment) == PAYMENT_FIELDS | {"order_id"}
    assert (payment["purpose"], payment["order_id"]) == ("order", order["id"])
    assert (payment["asset"], payment["network"]) == (method["asset"], method["network"])
    assert payment["address"] and payment["address"] in payment["uri"]
    assert payment["uri"].startswith(f"{method['network']}:")
    assert payment["amount_base_units"].isdigit() and int(payment["amount_base_units"]) > 0
    assert Decimal(payment["amount"]) * 10 ** DECIMALS[method["asset"]] == int(payment["amount_base_units"])
    assert payment["amount_usd"] == order["summary"]["total_usd"]
    assert Decimal(payment["rate"]) > 0
    assert datetime.fromisoformat(payment["expires_at"]) > datetime.now(UTC)
    assert payment["status"] == "awaiting_transfer"
    assert payment["reported_at"] is None
    assert payment["received"] == {"amount": "0", "confirmed_amount": "0"}
    assert payment["transfers"] == payment["credits"] == payment["checks"] == []

    assert client.get(f"/api/v1/payments/{payment['id']}", headers=customer["headers"]).json() == payment
    shown = client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json()
    assert shown["status"] == "awaiting_payment"
    assert shown["payments"] == [payment]
    listed = client.get("/api/v1/orders", headers=customer["headers"]).json()
    assert [o["payments"] for o in listed["items"]] == [[payment]]


def test_asking_again_for_the_same_method_gives_the_open_payment_back(client, customer, method):
    order = new_order(client, customer)
    first = pay_by_crypto(client, customer, order, method)
    again = pay_by_crypto(client, customer, order, method)
    assert (again["id"], again["address"], again["expires_at"]) == (first["id"], first["address"], first["expires_at"])
    payments = client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json()["payments"]
    assert [p["id"] for p in payments] == [first["id"]]


def test_another_customers_order_and_payment_are_404(client, customer, method):
    order = new_order(client, customer)
    payment = pay_by_crypto(client, customer, order, method)
    intruder = new_customer(client)["headers"]

    assert_problem(
        client.post(f"/api/v1/orders/{order['id']}/payments", json=method, headers=intruder), 404, "not_found"
    )
    assert_problem(client.post(f"/api/v1/orders/{order['id']}/pay-with-balance", headers=intruder), 404, "not_found")
    unknown = client.get("/api/v1/payments/does-not-exist", headers=intruder)
    for response in (
        client.get(f"/api/v1/payments/{payment['id']}", headers=intruder),
        client.post(f"/api/v1/payments/{payment['id']}/reported", headers=intruder),
        client.get(f"/api/v1/payments/{payment['id']}/qr.svg", headers=intruder),
    ):
        assert_problem(response, 404, "not_found")
        assert response.json() == unknown.json()
    assert client.get(f"/api/v1/payments/{payment['id']}", headers=customer["headers"]).json()["reported_at"] is None


def test_i_have_paid_twice(client, customer, method):
    payment = pay_by_crypto(client, customer, new_order(client, customer), method)
    path = f"/api/v1/payments/{payment['id']}/reported"

    first = client.post(path, headers=customer["headers"])
    assert first.status_code == 200, first.text
    assert first.json()["reported_at"] is not None
    assert first.json()["status"] == payment["status"]
    assert first.json()["received"] == payment["received"]

    second = client.post(path, headers=customer["headers"])
    assert second.status_code == 200, second.text
    assert second.json()["reported_at"] == first.json()["reported_at"]
    assert second.json()["status"] == payment["status"]
    balance = client.get("/api/v1/me/balance", headers=customer["headers"]).json()
    assert balance == {"available_usd": "0.00", "pending_usd": "0.00"}


def test_the_qr_code_is_an_svg(client, customer, method):
    payment = pay_by_crypto(client, customer, new_order(client, customer), method)
    response = client.get(f"/api/v1/payments/{payment['id']}/qr.svg", headers=customer["headers"])
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert "<svg" in response.text
    client.cookies.clear()  # new_customer logged this client in
    assert_problem(client.get(f"/api/v1/payments/{payment['id']}/qr.svg"), 401, "unauthenticated")


@pytest.mark.parametrize("amount", ["150", "99.99", "1e2", "-100", 100])
def test_a_topup_outside_the_four_amounts_is_refused(client, customer, method, amount):
    response = client.post("/api/v1/topups", json={"amount_usd": amount, **method}, headers=customer["headers"])
    assert_problem(response, 422, "validation_error", "amount_usd")
    assert client.get("/api/v1/topups", headers=customer["headers"]).json() == {"items": [], "next_cursor": None}


def test_a_topup_is_pending_until_paid(client, customer, method):
    response = client.post("/api/v1/topups", json={"amount_usd": "100", **method}, headers=customer["headers"])
    assert response.status_code == 201, response.text
    topup = response.json()
    assert set(topup) == {"id", "amount_usd", "status", "created_at", "payment", "payments"}
    assert topup["amount_usd"] == "100.00" and topup["payments"] == [topup["payment"]]
    assert set(topup["payment"]) == PAYMENT_FIELDS | {"topup_id"}
    assert (topup["payment"]["purpose"], topup["payment"]["topup_id"]) == ("topup", topup["id"])
    assert topup["payment"]["amount_usd"] == "100.00"

    assert client.get("/api/v1/topups", headers=customer["headers"]).json()["items"] == [topup]
    assert client.get(f"/api/v1/topups/{topup['id']}", headers=customer["headers"]).json() == topup  # found again
    stranger = new_customer(client)
    assert_problem(client.get(f"/api/v1/topups/{topup['id']}", headers=stranger["headers"]), 404, "not_found")
    balance = client.get("/api/v1/me/balance", headers=customer["headers"])
    assert balance.status_code == 200
    assert balance.json() == {"available_usd": "0.00", "pending_usd": "100.00"}
    assert client.get("/api/v1/me/ledger", headers=customer["headers"]).json() == {"items": [], "next_cursor": None}


def test_paying_with_an_empty_balance_is_refused(client, customer):
    order = new_order(client, customer)
    response = client.post(f"/api/v1/orders/{order['id']}/pay-with-balance", headers=customer["headers"])
    assert_problem(response, 409, "insufficient_balance")
    shown = client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json()
    assert (shown["status"], shown["payments"]) == ("awaiting_payment", [])
    assert client.get("/api/v1/me/ledger", headers=customer["headers"]).json() == {"items": [], "next_cursor": None}


def test_no_instructions_and_no_debit_for_an_order_that_cannot_be_delivered(client, method):
    customer = new_customer(client, ssh_key=False)
    order = new_order(client, customer)
    for refused in (
        client.post(f"/api/v1/orders/{order['id']}/payments", json=method, headers=customer["headers"]),
        client.post(f"/api/v1/orders/{order['id']}/pay-with-balance", headers=customer["headers"]),
    ):
        problem = assert_problem(refused, 422, "ssh_key_required", "ssh_public_key")
        assert "account page" in problem["detail"]
    shown = client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"])
    assert shown.status_code == 200 and (shown.json()["status"], shown.json()["payments"]) == ("awaiting_payment", [])

    keyed = client.put("/api/v1/me/ssh-key", json={"ssh_public_key": TEST_ACCOUNT_KEY}, headers=customer["headers"])
    assert keyed.status_code == 200, keyed.text
    assert pay_by_crypto(client, customer, order, method)["status"] == "awaiting_transfer"
    with_its_own = client.post("/api/v1/orders", json={**ORDER, "ssh_public_key": TEST_ACCOUNT_KEY},
                               headers=new_customer(client, ssh_key=False)["headers"])  # fmt: skip
    assert with_its_own.status_code == 201, with_its_own.text


def test_balance_and_ledger_need_a_login(client):
    assert_problem(client.get("/api/v1/me/balance"), 401, "unauthenticated")
    assert_problem(client.get("/api/v1/me/ledger"), 401, "unauthenticated")
    assert_problem(client.get("/api/v1/topups"), 401, "unauthenticated")


def test_operator_routes_refuse_customers(client, customer):
    methods = client.get("/api/v1/payment-methods").json()
    client.cookies.clear()  # new_customer logged this client in
    for method, path, body in (
        ("GET", "/api/v1/admin/reviews?status=open", None),
        ("POST", "/api/v1/admin/reviews/r1/resolve", {"decision": "dismissed", "note": "x"}),
        ("PUT", "/api/v1/admin/payment-methods/BTC/bitcoin", {"enabled": False}),
    ):
        assert_problem(client.request(method, path, json=body, headers=customer["headers"]), 403, "forbidden")
        assert_problem(client.request(method, path, json=body), 401, "unauthenticated")
    assert client.get("/api/v1/payment-methods").json() == methods


def test_an_operator_lists_the_review_queue(stack, client):
    headers = new_operator(stack, client)["headers"]
    reviews = client.get("/api/v1/admin/reviews?status=open", headers=headers)
    assert reviews.status_code == 200, reviews.text
    assert isinstance(reviews.json()["items"], list)
    assert client.get("/api/v1/admin/reviews", headers=headers).status_code == 200
    closed = client.get("/api/v1/admin/reviews?status=closed", headers=headers)
    assert_problem(closed, 422, "validation_error", "status")
    unknown = client.post(
        "/api/v1/admin/reviews/does-not-exist/resolve", json={"decision": "dismissed", "note": "x"}, headers=headers
    )
    assert_problem(unknown, 404, "not_found")
    bad_amount = client.post(
        "/api/v1/admin/reviews/does-not-exist/resolve",
        json={"decision": "credit_to_balance", "amount_usd": "12.345", "note": "x"},
        headers=headers,
    )
    assert_problem(bad_amount, 422, "validation_error", "amount_usd")


def test_an_operator_switches_a_method_off_and_on(stack, client, customer, method):
    headers = new_operator(stack, client)["headers"]
    path = f"/api/v1/admin/payment-methods/{method['asset']}/{method['network']}"
    order = new_order(client, customer)
    try:
        off = client.put(path, json={"enabled": False}, headers=headers)
        assert off.status_code == 200, off.text
        assert off.json() == {**method, "available": False, "reason": "disabled"}
        assert off.json() in client.get("/api/v1/payment-methods").json()
        refused = client.post(f"/api/v1/orders/{order['id']}/payments", json=method, headers=customer["headers"])
        assert_problem(refused, 409, "method_unavailable")
    finally:
        on = client.put(path, json={"enabled": True}, headers=headers)
    assert on.json() == {**method, "available": True, "reason": None}
    assert pay_by_crypto(client, customer, order, method)["status"] == "awaiting_transfer"


def test_orders_answer_503_while_payments_is_down(stack, client, customer):
    order = new_order(client, customer)
    payments = stack.processes["payments"]
    payments.stop()
    try:
        assert_problem(
            client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]), 503, "service_unavailable"
        )
        assert_problem(client.get("/api/v1/orders", headers=customer["headers"]), 503, "service_unavailable")
        assert_problem(client.get("/readyz"), 503, "service_unavailable")
        assert client.get("/api/v1/catalog").status_code == 200
    finally:
        payments.start()
        stack.wait_ready()
    assert client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json()["payments"] == []


def test_a_confirmed_topup_pays_an_order_from_the_balance(stack, client, customer, method):
    headers = customer["headers"]
    topup = client.post("/api/v1/topups", json={"amount_usd": "100", **method}, headers=headers).json()
    payment = topup["payment"]
    txid = uuid.uuid4().hex
    chain_event(
        stack,
        TransferConfirmed(
            network=method["network"],
            txid=txid,
            index=0,
            address=payment["address"],
            amount=int(payment["amount_base_units"]),
            block_height=1000,
            block_hash="00" * 32,
            confirmations=100,
            sequence=1,
        ),
    )
    balance = eventually(
        lambda: client.get("/api/v1/me/balance", headers=headers).json(), lambda b: b["available_usd"] == "100.00"
    )
    assert balance["pending_usd"] == "0.00"
    settled = client.get(f"/api/v1/payments/{payment['id']}", headers=headers).json()
    assert settled["status"] == "settled"
    assert settled["received"] == {"amount": payment["amount"], "confirmed_amount": payment["amount"]}
    [transfer] = settled["transfers"]
    assert transfer["txid"] == txid
    assert transfer["amount"] == payment["amount"]
    assert transfer["confirmations"] == 100
    assert transfer["status"] == "confirmed"
    assert transfer["required_confirmations"] >= 1

    order = new_order(client, customer)
    paid = client.post(f"/api/v1/orders/{order['id']}/pay-with-balance", headers=headers)
    assert paid.status_code == 200, paid.text
    assert paid.json()["id"] == order["id"]
    assert paid.json()["status"] in ("paid", "provisioning", "ready")  # provisioning may have started already
    total = order["summary"]["total_usd"]
    remaining = Decimal("100.00") - Decimal(total)
    assert client.get("/api/v1/me/balance", headers=headers).json()["available_usd"] == f"{remaining:.2f}"
    ledger = client.get("/api/v1/me/ledger", headers=headers).json()["items"]
    assert [entry["amount_usd"] for entry in ledger] == [f"-{total}", "100.00"]
    first = client.get("/api/v1/me/ledger?limit=1", headers=headers).json()
    rest = client.get(f"/api/v1/me/ledger?limit=1&cursor={first['next_cursor']}", headers=headers).json()
    assert first["items"] + rest["items"] == ledger and rest["next_cursor"] is None
    again = client.post(f"/api/v1/orders/{order['id']}/pay-with-balance", headers=headers)
    assert_problem(again, 409, "invalid_state")


def test_an_operator_dismisses_a_transfer_to_an_unknown_address(stack, client):
    headers = new_operator(stack, client)["headers"]
    txid = uuid.uuid4().hex
    chain_event(
        stack,
        TransferConfirmed(
            network="bitcoin",
            txid=txid,
            index=1,
            address=f"bcrt1q{txid}",
            amount=12345,
            sequence=1,
            confirmations=1,
            block_height=100,
        ),
    )
    [review] = eventually(
        lambda: [
            r
            for r in client.get("/api/v1/admin/reviews?status=open&limit=200", headers=headers).json()["items"]
            if r["transfer_key"] == f"bitcoin:{txid}:1"
        ],
        bool,
    )
    assert (review["reason"], review["status"], review["account_id"]) == ("unknown_address", "open", None)

    path = f"/api/v1/admin/reviews/{review['id']}/resolve"
    dismissed = client.post(path, json={"decision": "dismissed", "note": "not ours"}, headers=headers)
    assert dismissed.status_code == 200, dismissed.text
    resolved = dismissed.json()
    assert (resolved["status"], resolved["decision"], resolved["note"]) == ("resolved", "dismissed", "not ours")
    assert resolved["amount_usd"] is None and resolved["resolved_at"] and resolved["audit"]
    assert review["id"] in {
        r["id"] for r in client.get("/api/v1/admin/reviews?status=resolved&limit=200", headers=headers).json()["items"]
    }
    assert_problem(
        client.post(path, json={"decision": "dismissed", "note": "again"}, headers=headers), 409, "invalid_state"
    )
