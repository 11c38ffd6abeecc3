"""Support through the gateway, every service a real process: requests about an order, a top-up or the account,
and the secret refusal; operators' answers (admin routes and the operator command), the order's or the top-up's
payments beside a "paid twice?" question; extensions confirmed, paid and applied by provisioning, refused once the
order is over; a change of configuration confirmed as a new order."""

import json
import subprocess
import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import create_engine, text

from infra.local.stack import BIN
from kernodeck_contracts.events import TransferConfirmed, TransferSeen
from tests.e2e.conftest import assert_problem, new_customer
from tests.e2e.test_payments_http import chain_event, eventually, new_operator
from tests.e2e.test_provisioning import top_up

ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}


def due_by(days: float = 2) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).isoformat()


def new_order(client, customer) -> dict:
    created = client.post("/api/v1/orders", json=ORDER, headers=customer["headers"])
    assert created.status_code == 201, created.text
    return created.json()


def ready_order(stack, client, customer) -> dict:
    order = new_order(client, customer)
    top_up(stack, client, customer)
    paid = client.post(f"/api/v1/orders/{order['id']}/pay-with-balance", headers=customer["headers"])
    assert paid.status_code == 200, paid.text
    return eventually(
        lambda: client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json(),
        lambda o: o["status"] == "ready",
        timeout=60,
    )


def ask(client, customer, order_id, kind, message, **fields):
    return client.post(
        "/api/v1/support-requests",
        json={"order_id": order_id, "kind": kind, "message": message, **fields},
        headers=customer["headers"],
    )


def run_admin(stack, *args) -> subprocess.CompletedProcess:
    """`kernodeck-admin support ...` as an operator runs it."""
    return subprocess.run([str(BIN / "kernodeck-admin"), "support", *args], env=stack.process("support").env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip


def timeline(client, customer, order_id) -> list[dict]:
    return client.get(f"/api/v1/orders/{order_id}", headers=customer["headers"]).json()["timeline"]


def test_a_secret_is_refused_before_anything_is_stored_and_an_answer_reaches_the_customer(stack, client, customer):
    order = new_order(client, customer)
    leaked = ask(client, customer, order["id"], "incident", "it fails",
                 first_error="curl -H 'Authorization: Bearer 0123456789abcdefghij'")  # fmt: skip
    body = assert_problem(leaked, 422, "secret_in_request", "first_error")
    assert "0123456789abcdefghij" not in leaked.text and "secret" in body["detail"]
    assert client.get("/api/v1/support-requests", headers=customer["headers"]).json() == {
        "items": [],
        "next_cursor": None,
    }

    fields = {
        "failed_at": "2026-11-30T08:15:00Z",
        "launch_command": "python train.py --config config/pilote.json",
        "versions": "Python 3.11.2, torch 2.5.1+cu124",
        "first_error": "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "minimal_example": "import torch\ntorch.ones(1, device='cuda') + 1",
    }
    opened = ask(client, customer, order["id"], "incident", "<b>the job dies</b> at the first step", **fields)
    assert opened.status_code == 201, opened.text
    request = opened.json()
    assert {k: request[k] for k in fields} == fields and request["message"] == "<b>the job dies</b> at the first step"
    assert_problem(ask(client, customer, "not-an-order", "question", "hi"), 404, "not_found")
    intruder = new_customer(client)
    assert_problem(ask(client, intruder, order["id"], "question", "hi"), 404, "not_found")

    assert_problem(client.get("/api/v1/admin/support-requests", headers=customer["headers"]), 403, "forbidden")
    operator = new_operator(stack, client)["headers"]
    queue = client.get("/api/v1/admin/support-requests", headers=operator).json()
    assert request["id"] in [r["id"] for r in queue["items"]]
    leaked = client.post(
        f"/api/v1/admin/support-requests/{request['id']}/answers",
        json={"text": "Try my account: git clone https://ops:Hunter2024x@git.example/fix.git"},
        headers=operator,
    )
    body = assert_problem(leaked, 422, "secret_in_request", "text")
    assert "Hunter2024x" not in leaked.text and "secret" in body["detail"]
    answered = client.post(
        f"/api/v1/admin/support-requests/{request['id']}/answers",
        json={"text": "Your wheel is built for another GPU: install torch for CUDA 12.4."},
        headers=operator,
    )
    assert answered.status_code == 200, answered.text
    mine = client.get("/api/v1/support-requests", headers=customer["headers"]).json()["items"]
    assert [a["text"] for a in mine[0]["answers"]] == [
        "Your wheel is built for another GPU: install torch for CUDA 12.4."
    ]
    notes = eventually(
        lambda: timeline(client, customer, order["id"]), lambda t: any(e["kind"] == "support_answered" for e in t)
    )
    assert [e["kind"] for e in notes] == ["created", "support_request", "support_answered"]
    assert [e["code"] for e in notes] == ["order_recorded", "support_incident", "support_answered"]
    assert notes[-1]["params"] == {"text": "Your wheel is built for another GPU: install torch for CUDA 12.4."}
    assert notes[-1]["detail"] == "Support answered: Your wheel is built for another GPU: install torch for CUDA 12.4."


def test_a_request_about_a_topup_or_the_account_reaches_an_operator_with_what_it_is_about(stack, client, customer):
    topup = client.post("/api/v1/topups", json={"amount_usd": "100", "asset": "LTC", "network": "litecoin"},
                        headers=customer["headers"]).json()  # fmt: skip
    about_topup = client.post("/api/v1/support-requests", headers=customer["headers"], json={
        "topup_id": topup["id"], "kind": "question", "message": "I sent the LTC; where is it?"})  # fmt: skip
    assert about_topup.status_code == 201, about_topup.text
    assert (about_topup.json()["order_id"], about_topup.json()["topup_id"]) == (None, topup["id"])
    about_account = client.post("/api/v1/support-requests", headers=customer["headers"],
                                json={"kind": "question", "message": "Can I change my email?"})  # fmt: skip
    assert about_account.status_code == 201, about_account.text
    assert (about_account.json()["order_id"], about_account.json()["topup_id"]) == (None, None)

    stranger = new_customer(client)
    foreign = client.post("/api/v1/support-requests", headers=stranger["headers"],
                          json={"topup_id": topup["id"], "kind": "question", "message": "whose?"})  # fmt: skip
    assert_problem(foreign, 404, "not_found")
    both = {"topup_id": topup["id"], "order_id": new_order(client, customer)["id"], "kind": "question", "message": "m"}
    assert_problem(client.post("/api/v1/support-requests", json=both, headers=customer["headers"]), 422,
                   "validation_error", "topup_id")  # fmt: skip
    no_order = {"kind": "extension", "message": "7 more days", "extra_days": 7, "due_by": due_by()}
    assert_problem(client.post("/api/v1/support-requests", json=no_order, headers=customer["headers"]), 422,
                   "validation_error", "order_id")  # fmt: skip

    operator = new_operator(stack, client)["headers"]
    seen = client.get(f"/api/v1/admin/support-requests/{about_topup.json()['id']}", headers=operator).json()
    assert (seen["order"], seen["topup"]["id"]) == (None, topup["id"])
    assert seen["topup"]["payment"]["address"] == topup["payment"]["address"]
    account = client.get(f"/api/v1/admin/support-requests/{about_account.json()['id']}", headers=operator).json()
    assert (account["order"], account["topup"]) == (None, None)
    answered = client.post(f"/api/v1/admin/support-requests/{about_topup.json()['id']}/answers",
                           json={"text": "It is confirming: 2 of 6 blocks."}, headers=operator)  # fmt: skip
    assert answered.status_code == 200, answered.text
    mine = client.get("/api/v1/support-requests", headers=customer["headers"]).json()["items"]
    answer = next(r for r in mine if r["id"] == about_topup.json()["id"])["answers"][0]
    assert (answer["text"], answer["code"], answer["params"]) == ("It is confirming: 2 of 6 blocks.", None, {})


def test_the_operator_command_answers_and_sees_the_payments_of_a_paid_twice_question(stack, client, customer):
    order = new_order(client, customer)
    payments = {}
    for asset, network in (("BTC", "bitcoin"), ("LTC", "litecoin")):
        paid = client.post(f"/api/v1/orders/{order['id']}/payments", json={"asset": asset, "network": network},
                           headers=customer["headers"])  # fmt: skip
        assert paid.status_code == 201, paid.text
        payments[network] = paid.json()
    bitcoin = payments["bitcoin"]
    txid = uuid.uuid4().hex
    chain_event(stack, TransferSeen(network="bitcoin", txid=txid, index=0, address=bitcoin["address"],
                                    amount=int(bitcoin["amount_base_units"]), sequence=1))  # fmt: skip
    request = ask(client, customer, order["id"], "question", f"Did I pay order {order['id']} twice?").json()

    operator = new_operator(stack, client)["headers"]
    seen = eventually(
        lambda: client.get(f"/api/v1/admin/support-requests/{request['id']}", headers=operator).json(),
        lambda r: any(p["transfers"] for p in r["order"]["payments"]),
    )
    assert seen["order"]["id"] == order["id"]
    by_network = {p["network"]: p for p in seen["order"]["payments"]}
    assert set(by_network) == {"bitcoin", "litecoin"} and by_network["litecoin"]["transfers"] == []
    assert [(t["txid"], t["status"]) for t in by_network["bitcoin"]["transfers"]] == [(txid, "seen")]

    def admin(*args):
        done = run_admin(stack, *args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    assert request["id"] in [r["id"] for r in admin("list")["items"]]
    leaked = run_admin(stack, "answer", request["id"], "Log in as root with --password Hunter2024x to check")
    assert leaked.returncode == 1 and leaked.stdout == ""
    assert leaked.stderr.startswith("refused (secret_in_request): text: looks like a password on a command line")
    assert "Hunter2024x" not in leaked.stderr and admin("show", request["id"])["answers"] == []
    admin("answer", request["id"], "No: one transfer, on bitcoin, not confirmed yet; do not send the litecoin one.")
    assert admin("show", request["id"])["status"] == "answered"
    mine = client.get("/api/v1/support-requests", headers=customer["headers"]).json()["items"]
    assert (
        mine[0]["answers"][0]["text"]
        == "No: one transfer, on bitcoin, not confirmed yet; do not send the litecoin one."
    )


def test_an_extension_is_refused_once_the_order_has_ended(stack, client):
    customer = new_customer(client)
    order = ready_order(stack, client, customer)
    request = ask(client, customer, order["id"], "extension", "3 more days", extra_days=3, due_by=due_by()).json()
    engine = create_engine(stack.env["PROVISIONING_DATABASE_URL"].replace("postgresql://", "postgresql+psycopg2://"))
    with engine.begin() as conn:  # the term runs out now: provisioning reclaims the node at its next sweep
        conn.execute(text("UPDATE rentals SET ends_at = now() - interval '1 second' WHERE order_id = :id"),
                     {"id": order["id"]})  # fmt: skip
    engine.dispose()
    eventually(
        lambda: client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json()["status"],
        lambda status: status == "ended",
        timeout=30,
    )
    operator = new_operator(stack, client)["headers"]
    late = client.post(f"/api/v1/admin/support-requests/{request['id']}/confirm", json={}, headers=operator)
    assert_problem(late, 409, "invalid_state")
    again = ask(client, customer, order["id"], "extension", "3 more days", extra_days=3, due_by=due_by())
    assert_problem(again, 409, "invalid_state")
    cancelled = new_order(client, customer)
    client.post(f"/api/v1/orders/{cancelled['id']}/cancel", headers=customer["headers"])
    refused = ask(client, customer, cancelled["id"], "extension", "m", extra_days=7, due_by=due_by())
    assert_problem(refused, 409, "invalid_state")


def test_an_extension_confirmed_then_paid_moves_the_end_and_only_then_shows_it(stack, client):
    customer = new_customer(client)
    order = ready_order(stack, client, customer)
    ends_at = order["rental"]["ends_at"]
    request = ask(client, customer, order["id"], "extension", "7 more days", extra_days=7, due_by=due_by()).json()
    operator = new_operator(stack, client)["headers"]
    confirmed = client.post(f"/api/v1/admin/support-requests/{request['id']}/confirm", json={}, headers=operator)
    assert confirmed.status_code == 200, confirmed.text
    extension = confirmed.json()
    assert (extension["price_usd"], extension["status"]) == ("62.00", "confirmed")  # the rtx4090 lot for 7 days

    shown = client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json()
    assert [(e["id"], e["status"]) for e in shown["extensions"]] == [(extension["id"], "confirmed")]
    assert shown["rental"]["ends_at"] == ends_at  # confirmed is not paid: the end has not moved
    intent = client.post(f"/api/v1/extensions/{extension['id']}/payments", json={"asset": "LTC", "network": "litecoin"},
                         headers=customer["headers"])  # fmt: skip
    assert intent.status_code == 201, intent.text
    assert (intent.json()["purpose"], intent.json()["extension_id"], intent.json()["amount_usd"]) == (
        "extension", extension["id"], "62.00",
    )  # fmt: skip
    intruder = new_customer(client)
    stolen = client.post(f"/api/v1/extensions/{extension['id']}/pay-with-balance", headers=intruder["headers"])
    assert_problem(stolen, 404, "not_found")

    paid = client.post(f"/api/v1/extensions/{extension['id']}/pay-with-balance", headers=customer["headers"])
    assert paid.status_code == 200, paid.text
    extended = eventually(
        lambda: client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json(),
        lambda o: o["extensions"][0]["status"] == "applied" and o["rental"]["ends_at"] != ends_at,
        timeout=30,
    )
    before = datetime.fromisoformat(ends_at)
    assert datetime.fromisoformat(extended["rental"]["ends_at"]) == before + timedelta(days=7)
    kinds = [e["kind"] for e in extended["timeline"]]
    assert kinds.index("extension_confirmed") < kinds.index("extension_paid") < kinds.index("rental_extended")
    assert [p["purpose"] for p in extended["extensions"][0]["payments"]] == ["extension"]
    again = client.post(f"/api/v1/extensions/{extension['id']}/pay-with-balance", headers=customer["headers"])
    assert_problem(again, 409, "invalid_state")
    balance = client.get("/api/v1/me/balance", headers=customer["headers"]).json()
    assert balance["available_usd"] == "9.00"  # 100 topped up, 29 for the order, 62 for the extension

    # A second extension, paid by its crypto intent this time: the transfer confirmed moves the end again.
    second = ask(client, customer, order["id"], "extension", "3 more", extra_days=3, due_by=due_by()).json()
    more = client.post(f"/api/v1/admin/support-requests/{second['id']}/confirm", json={}, headers=operator).json()
    payment = client.post(f"/api/v1/extensions/{more['id']}/payments", json={"asset": "BTC", "network": "bitcoin"},
                          headers=customer["headers"]).json()  # fmt: skip
    chain_event(stack, TransferConfirmed(
        network="bitcoin", txid=uuid.uuid4().hex, index=0, address=payment["address"],
        amount=int(payment["amount_base_units"]), block_height=1000, block_hash="00" * 32, confirmations=100, sequence=1,
    ))  # fmt: skip
    again_extended = eventually(
        lambda: client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json(),
        # Support (the extension's status) and orders (the rental's end) each take RentalExtended on their own.
        lambda o: (
            [e["status"] for e in o["extensions"]] == ["applied", "applied"]
            and o["rental"]["ends_at"] != extended["rental"]["ends_at"]
        ),
        timeout=30,
    )
    assert datetime.fromisoformat(again_extended["rental"]["ends_at"]) == before + timedelta(days=10)
    assert [p["status"] for p in again_extended["extensions"][1]["payments"]] == ["settled"]


def test_a_change_of_configuration_is_confirmed_as_a_new_order_at_the_catalogs_price(stack, client):
    customer = new_customer(client)
    order = ready_order(stack, client, customer)
    asked = ask(client, customer, order["id"], "extension", "Two cards for a week, please",
                configuration="2 x RTX 4090 for 7 days", due_by=due_by()).json()  # fmt: skip
    operator = new_operator(stack, client)["headers"]
    assert_problem(  # it asks for no extra days
        client.post(f"/api/v1/admin/support-requests/{asked['id']}/confirm", json={}, headers=operator),
        409, "invalid_state",
    )  # fmt: skip
    change = {"model": "rtx4090", "lots": 2, "duration_days": 7, "note": "Copy your data over before the end."}
    confirmed = client.post(f"/api/v1/admin/support-requests/{asked['id']}/confirm-configuration", json=change,
                            headers=operator)  # fmt: skip
    assert confirmed.status_code == 200, confirmed.text
    answer = confirmed.json()["answers"][-1]
    assert (confirmed.json()["decision"], answer["code"], answer["text"]) == (
        "confirmed", "configuration_confirmed", "Copy your data over before the end.",
    )  # fmt: skip
    new_order_id = answer["params"]["new_order_id"]
    new = client.get(f"/api/v1/orders/{new_order_id}", headers=customer["headers"]).json()
    assert (new["status"], new["summary"]["lots"], new["summary"]["total_usd"]) == ("awaiting_payment", 2, "124.00")
    assert answer["params"] == {"new_order_id": new_order_id, "lots": 2, "model_name": new["summary"]["model_name"],
                                "days": 7, "total_usd": "124.00"}  # fmt: skip
    entries = eventually(
        lambda: timeline(client, customer, order["id"]), lambda t: t[-1]["code"] == "configuration_confirmed"
    )
    assert new_order_id in entries[-1]["detail"]
    twice = client.post(f"/api/v1/admin/support-requests/{asked['id']}/confirm-configuration", json=change,
                        headers=operator)  # fmt: skip
    assert_problem(twice, 409, "invalid_state")
    by_command = run_admin(
        stack, "confirm-configuration", asked["id"], "--model", "rtx4090", "--lots", "2", "--days", "7"
    )
    assert by_command.returncode == 1 and by_command.stderr.startswith("refused (invalid_state)"), by_command.stderr
