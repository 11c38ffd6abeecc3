"""GPUs rented through the gateway: capacity held before instructions, delivery on the local test hosts,
access shown to the owner only, operators' node routes. Every service a real process."""

import subprocess
import uuid
from concurrent.futures import ThreadPoolExecutor

import httpx

from kernodeck_contracts.events import TransferConfirmed
from tests.e2e.conftest import assert_problem, new_customer
from tests.e2e.test_payments_http import chain_event, eventually, new_operator

CONTENDED_MODEL = "h200"  # no other test orders it: the stack's host has exactly STACK_GPUS["h200"] GPUs


def top_up(stack, client, customer, usd="100"):
    payment = client.post(
        "/api/v1/topups", json={"amount_usd": usd, "asset": "BTC", "network": "bitcoin"}, headers=customer["headers"]
    ).json()["payment"]
    confirmed = TransferConfirmed(
        network="bitcoin", txid=uuid.uuid4().hex, index=0, address=payment["address"],
        amount=int(payment["amount_base_units"]), block_height=1000, block_hash="00" * 32, confirmations=100, sequence=1,
    )  # fmt: skip
    chain_event(stack, confirmed)
    eventually(
        lambda: client.get("/api/v1/me/balance", headers=customer["headers"]).json()["available_usd"],
        lambda v: v == f"{usd}.00",
    )


def test_a_paid_order_becomes_ready_and_the_customer_logs_in(stack, client, tmp_path):
    me = new_customer(client)
    private = tmp_path / "customer_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(private)], check=True)
    key = (tmp_path / "customer_key.pub").read_text().strip()
    order = client.post(
        "/api/v1/orders",
        json={"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "pytorch", "ssh_public_key": key},
        headers=me["headers"],
    ).json()
    top_up(stack, client, me)
    paid = client.post(f"/api/v1/orders/{order['id']}/pay-with-balance", headers=me["headers"])
    assert paid.status_code == 200, paid.text
    ready = eventually(
        lambda: client.get(f"/api/v1/orders/{order['id']}", headers=me["headers"]).json(),
        lambda o: o["status"] == "ready",
        timeout=60,
    )
    kinds = [entry["kind"] for entry in ready["timeline"]]
    assert kinds[-3:] == ["paid", "provisioning", "ready"]
    rental, access = ready["rental"], ready["access"]
    assert rental["delivered_at"] == rental["starts_at"] < rental["ends_at"]
    assert rental["starts_at"] > ready["created_at"]  # the term starts at delivery, not at the order
    assert access["jupyter_url"] is None and access["jupyter_token"] is None and access["jupyter_tunnel"] is None
    host = stack.hosts["rtx4090"]
    assert (access["ssh_host"], access["ssh_port"]) == (host.host, host.port)
    known = tmp_path / "known_hosts"
    known.write_text(f"{host.host} {host.host_key}\n")
    login = subprocess.run(
        ["ssh", "-i", str(private), "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={known}", "-p", str(access["ssh_port"]),
         f"{access['ssh_user']}@{access['ssh_host']}", "echo $CUDA_VISIBLE_DEVICES; stat -c %a $HOME"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert login.returncode == 0, login.stderr
    assert login.stdout.split() == ["0", "700"]  # its one GPU, numbered from 0 as the driver shows it; a closed home
    listed = client.get("/api/v1/orders", headers=me["headers"]).json()["items"]
    assert next(o for o in listed if o["id"] == order["id"])["access"] == access
    intruder = new_customer(client)
    assert_problem(client.get(f"/api/v1/orders/{order['id']}", headers=intruder["headers"]), 404, "not_found")


def test_200_parallel_intents_for_10_free_gpus_give_exactly_10_instructions(stack, client):
    me = new_customer(client)
    free = next(m for m in client.get("/api/v1/catalog").json()["models"] if m["id"] == CONTENDED_MODEL)
    assert free["available_lots"] == 10
    body = {"model": CONTENDED_MODEL, "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
    orders = [client.post("/api/v1/orders", json=body, headers=me["headers"]).json()["id"] for _ in range(200)]

    def intent(order_id):
        with httpx.Client(base_url=stack.url, timeout=30) as http:
            return http.post(
                f"/api/v1/orders/{order_id}/payments",
                json={"asset": "BTC", "network": "bitcoin"},
                headers=me["headers"],
            )

    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(intent, orders))
    statuses = [answer.status_code for answer in answers]
    assert statuses.count(201) == 10, statuses
    assert statuses.count(409) == 190
    assert {answer.json()["code"] for answer in answers if answer.status_code == 409} == {"out_of_capacity"}
    refused = next(order_id for order_id, answer in zip(orders, answers, strict=True) if answer.status_code == 409)
    still = client.get(f"/api/v1/orders/{refused}", headers=me["headers"]).json()
    assert (still["status"], still["payments"]) == ("awaiting_payment", [])  # the order stays viewable
    eventually(
        lambda: next(m for m in client.get("/api/v1/catalog").json()["models"] if m["id"] == CONTENDED_MODEL),
        lambda m: m["available_lots"] == 0,
    )


def test_a_malformed_account_key_is_a_422(client, customer):
    bad = client.put("/api/v1/me/ssh-key", json={"ssh_public_key": "ssh-rsa AAAA"}, headers=customer["headers"])
    assert_problem(bad, 422, "validation_error", "ssh_public_key")
    order = {"model": "h100", "duration_days": 3, "lots": 1, "preparation": "ubuntu", "ssh_public_key": "not a key"}
    assert_problem(
        client.post("/api/v1/orders", json=order, headers=customer["headers"]),
        422,
        "validation_error",
        "ssh_public_key",
    )
    note = {**order, "ssh_public_key": None, "preparation_note": "CUDA 12 and JAX"}
    assert_problem(
        client.post("/api/v1/orders", json=note, headers=customer["headers"]),
        422,
        "validation_error",
        "preparation_note",
    )
    custom = {**note, "preparation": "custom"}
    assert (
        client.post("/api/v1/orders", json=custom, headers=customer["headers"]).json()["preparation_note"]
        == "CUDA 12 and JAX"
    )


def test_a_preparation_the_model_does_not_run_is_a_422(client, customer):
    order = {"model": "mi300x", "duration_days": 3, "lots": 1, "preparation": "blender"}
    assert_problem(
        client.post("/api/v1/orders", json=order, headers=customer["headers"]), 422, "validation_error", "preparation"
    )


def test_operators_manage_nodes_and_customers_cannot(stack, client, customer):
    assert_problem(client.get("/api/v1/admin/nodes", headers=customer["headers"]), 403, "forbidden")
    operator = new_operator(stack, client)["headers"]
    nodes = client.get("/api/v1/admin/nodes", headers=operator).json()
    host = stack.hosts["l40s"]
    mine = next(node for node in nodes if (node["host"], node["port"]) == (host.host, host.port))
    assert (mine["isolation"], mine["gpus_in_use"]) == ("kernel", 0)  # checked at registration: several rentals
    again = client.post("/api/v1/admin/nodes", json=host.registration("l40s"), headers=operator)
    assert_problem(again, 409, "already_exists")
    broken = {**host.registration("l40s"), "port": 2222, "host_key": "ssh-ed25519 nope"}
    assert_problem(
        client.post("/api/v1/admin/nodes", json=broken, headers=operator), 422, "validation_error", "host_key"
    )
    drained = client.put(f"/api/v1/admin/nodes/{mine['id']}/state", json={"state": "draining"}, headers=operator)
    assert drained.json()["state"] == "draining"
    eventually(
        lambda: next(m for m in client.get("/api/v1/catalog").json()["models"] if m["id"] == "l40s")["available_lots"],
        lambda lots: lots == 0,
    )
    back = client.put(f"/api/v1/admin/nodes/{mine['id']}/state", json={"state": "available"}, headers=operator)
    assert back.json()["state"] == "available"
