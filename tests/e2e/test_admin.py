"""`kernodeck-admin`: each area's commands run against the running system, as an operator runs them."""

import json
import os
import subprocess
from pathlib import Path

from infra.local.stack import BIN
from tests.e2e.conftest import new_customer

ROOT = Path(__file__).resolve().parents[2]
# Valid Solana addresses (ed25519 points), as an operator would import them.
SOLANA_ADDRESSES = ["9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM", "HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH"]


def admin(stack, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "kernodeck-admin"), *args],
        env={**os.environ, **stack.env, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_operator_role_is_granted_and_revoked(stack, client):
    customer = new_customer(client)
    ok(admin(stack, "accounts", "grant-operator", customer["email"]))
    assert client.get("/api/v1/admin/reviews", headers=customer["headers"]).status_code == 200
    ok(admin(stack, "accounts", "revoke-operator", customer["email"]))
    assert client.get("/api/v1/admin/reviews", headers=customer["headers"]).status_code == 403
    assert admin(stack, "accounts", "grant-operator", "nobody@example.org").returncode == 1


def test_gpu_nodes_are_listed_and_moved(stack):
    nodes = json.loads(ok(admin(stack, "nodes", "list-nodes")))
    node = next(n for n in nodes if n["state"] == "available")
    assert json.loads(ok(admin(stack, "nodes", "maintain", node["id"], "--note", "fan")))["state"] == "maintenance"
    assert json.loads(ok(admin(stack, "nodes", "enable", node["id"])))["state"] == "available"


def test_prices_are_shown_and_an_edited_catalog_is_checked(stack, tmp_path):
    assert "h100: 3 days" in ok(admin(stack, "prices", "show"))
    shipped = ROOT / "services/catalog/kernodeck_catalog/catalog.toml"
    assert "restart the catalog" in ok(admin(stack, "prices", "check", str(shipped)))
    broken = tmp_path / "catalog.toml"
    broken.write_text(shipped.read_text().replace("{ 3 = ", "{ 4 = ", 1))
    refused = admin(stack, "prices", "check", str(broken))
    assert refused.returncode == 1 and "refused" in refused.stderr


def test_a_payment_method_is_switched_off_and_on(stack, client):
    off = admin(stack, "payments", "--as", "cli:ops", "disable", "BTC", "bitcoin")
    assert json.loads(ok(off))["reason"] == "disabled"
    methods = {(m["asset"], m["network"]): m for m in client.get("/api/v1/payment-methods").json()}
    assert methods[("BTC", "bitcoin")]["available"] is False
    assert json.loads(ok(admin(stack, "payments", "enable", "BTC", "bitcoin")))["available"] is True
    listed = {(m["asset"], m["network"]): m for m in json.loads(ok(admin(stack, "payments", "methods")))}
    assert listed[("BTC", "bitcoin")]["available"] is True
    assert admin(stack, "payments", "disable", "BTC", "tron").returncode == 1


def test_the_review_queue_is_listed_and_an_unknown_item_refused(stack):
    assert isinstance(json.loads(ok(admin(stack, "payments", "reviews", "--limit", "5")))["items"], list)
    refused = admin(stack, "payments", "resolve", "no-such-item", "dismissed", "--note", "test")
    assert refused.returncode == 1 and "refused (not_found)" in refused.stderr


def test_set_rate_writes_a_rates_file_payments_reads(stack, tmp_path):
    rates = tmp_path / "rates.json"
    ok(admin(stack, "payments", "set-rate", "btc", "64000.50", env={"PAYMENTS_RATE_FILE": str(rates)}))
    ok(admin(stack, "payments", "set-rate", "ETH", "3000", env={"PAYMENTS_RATE_FILE": str(rates)}))
    assert json.loads(rates.read_text())["rates"] == {"BTC": "64000.50", "ETH": "3000"}
    refused = admin(stack, "payments", "set-rate", "BTC", "-1", env={"PAYMENTS_RATE_FILE": str(rates)})
    assert refused.returncode == 1


def test_the_account_keys_derive_the_addresses_payments_hands_out(stack, client):
    customer = new_customer(client)
    topup = client.post(
        "/api/v1/topups", json={"amount_usd": "100", "asset": "ETH", "network": "ethereum"}, headers=customer["headers"]
    )
    assert topup.status_code == 201, topup.text
    address = topup.json()["payment"]["address"]
    shown = ok(admin(stack, "payments", "check-xpubs", "--count", "200"))
    index = next(line.split()[1] for line in shown.splitlines() if line.startswith("ethereum ") and address in line)
    ok(admin(stack, "payments", "check-xpubs", "--expect", "ethereum", index, address))
    wrong = admin(stack, "payments", "check-xpubs", "--expect", "ethereum", index, "0x" + "0" * 40)
    assert wrong.returncode == 1 and "MISMATCH ethereum" in wrong.stderr


def test_the_solana_pool_is_imported_and_counted(stack, tmp_path):
    pool = tmp_path / "pool.txt"
    pool.write_text("\n".join(SOLANA_ADDRESSES) + "\n")
    before = int(ok(admin(stack, "payments", "solana-pool")).split()[-1])
    imported = ok(admin(stack, "payments", "import-solana-addresses", str(pool)))
    assert f"unused Solana addresses: {before + len(SOLANA_ADDRESSES)}" in imported or "0 new" in imported


def test_support_and_dead_letters_are_listed(stack):
    assert isinstance(json.loads(ok(admin(stack, "support", "list")))["items"], list)
    ok(admin(stack, "dead-letters", "list", "payments"))
    assert ok(admin(stack, "dead-letters", "list", "orders")) == ""


def test_an_unknown_area_is_refused_with_the_list_of_areas(stack):
    refused = admin(stack, "wallets")
    assert refused.returncode == 2 and "payments" in refused.stderr and "dead-letters" in refused.stderr
