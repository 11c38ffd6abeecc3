"""Real payments on real chains, through the gateway: an order is paid by a transfer made with a node's own wallet.

The whole system runs (services, gateway, one watcher per network) next to
litecoind, Bitcoin Knots and anvil started by the same code as `make run`
(`chain_stack` and `devnet` in conftest.py), with 2 confirmations required.
A network whose node is not installed is skipped.
"""

import subprocess
import time
from decimal import Decimal

import httpx
import pytest

from infra.devnet.tokens import transfer_token
from tests.e2e.conftest import CHAIN_CONFIRMATIONS, new_customer

ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}
PAID_WITHIN_S = 30.0
SEEN_WITHIN_S = 10.0


@pytest.fixture
def chain_client(chain_stack):
    with httpx.Client(base_url=chain_stack.url, timeout=10) as http:
        yield http


def node_of(devnet, network: str):
    if network not in devnet.up:
        pytest.skip(f"{network}: {devnet.skipped.get(network, 'not started')}")
    return devnet.nodes[network]


def poll(read, until, timeout: float, what: str):
    """read() until until(value) holds; the value, or a failure naming `what` and the last value."""
    deadline = time.monotonic() + timeout
    while not until(value := read()):
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not within {timeout:.0f} s; last: {value}")
        time.sleep(0.1)
    return value


def order_with_instructions(client, asset: str, network: str) -> tuple[dict, dict, dict]:
    """A new customer's order and its payment instructions for `asset` on `network`."""
    customer = new_customer(client)
    created = client.post("/api/v1/orders", json=ORDER, headers=customer["headers"])
    assert created.status_code == 201, created.text
    order = created.json()
    response = client.post(
        f"/api/v1/orders/{order['id']}/payments", json={"asset": asset, "network": network}, headers=customer["headers"]
    )
    assert response.status_code == 201, response.text
    payment = response.json()
    assert payment["status"] == "awaiting_transfer"
    return customer, order, payment


def wait_paid(client, customer, order, payment, txid: str) -> dict:
    """Poll the order until it is paid (provisioning may have moved it on already), then check the payment
    settled by the one transfer `txid`."""
    headers = customer["headers"]
    shown = poll(
        lambda: client.get(f"/api/v1/orders/{order['id']}", headers=headers).json(),
        lambda o: o["status"] in ("paid", "provisioning", "ready"),
        PAID_WITHIN_S,
        f"order {order['id']} paid",
    )
    [settled] = [p for p in shown["payments"] if p["id"] == payment["id"]]
    assert settled["status"] == "settled"
    assert settled["received"] == {"amount": payment["amount"], "confirmed_amount": payment["amount"]}
    [transfer] = settled["transfers"]
    assert transfer["txid"].removeprefix("0x").lower() == txid.removeprefix("0x").lower()
    assert Decimal(transfer["amount"]) == Decimal(payment["amount"])
    assert transfer["status"] == "confirmed"
    assert transfer["required_confirmations"] == CHAIN_CONFIRMATIONS
    assert transfer["confirmations"] >= CHAIN_CONFIRMATIONS
    assert client.get(f"/api/v1/payments/{payment['id']}", headers=headers).json() == settled
    return shown


def payment_status(client, customer, payment) -> dict:
    return client.get(f"/api/v1/payments/{payment['id']}", headers=customer["headers"]).json()


def wait_confirming(client, customer, payment) -> None:
    """The transfer is in one block: the payment shows it confirming, with 1 confirmation."""
    confirming = poll(
        lambda: payment_status(client, customer, payment),
        lambda p: p["status"] == "confirming",
        SEEN_WITHIN_S,
        "the payment confirming",
    )
    assert [(t["confirmations"], t["status"]) for t in confirming["transfers"]] == [(1, "confirming")]


@pytest.mark.parametrize(("asset", "network"), [("LTC", "litecoin"), ("BTC", "bitcoin")])
def test_coins_sent_with_the_nodes_cli_pay_the_order(chain_client, devnet, asset, network):
    node = node_of(devnet, network)
    customer, order, payment = order_with_instructions(chain_client, asset, network)

    # The node's own CLI and wallet, as README's "Pay a test order" does it.
    sent = subprocess.run(
        [*node.cli_argv(), "sendtoaddress", payment["address"], payment["amount"]],
        capture_output=True,
        text=True,
        check=True,
    )
    txid = sent.stdout.strip()

    # "J'ai payé" while the transfer is only in the mempool: the watcher looks and finds it.
    reported = chain_client.post(f"/api/v1/payments/{payment['id']}/reported", headers=customer["headers"])
    assert reported.status_code == 200, reported.text
    seen = poll(
        lambda: payment_status(chain_client, customer, payment),
        lambda p: p["status"] == "seen",
        SEEN_WITHIN_S,
        "the payment seen in the mempool",
    )
    assert [(t["txid"], t["confirmations"], t["status"]) for t in seen["transfers"]] == [(txid, 0, "seen")]
    assert seen["received"] == {"amount": payment["amount"], "confirmed_amount": "0"}
    assert chain_client.get(f"/api/v1/orders/{order['id']}", headers=customer["headers"]).json()["status"] == (
        "awaiting_payment"
    )

    subprocess.run([*node.cli_argv(), "-generate", str(CHAIN_CONFIRMATIONS)], capture_output=True, check=True)
    wait_paid(chain_client, customer, order, payment, txid)


def test_ether_sent_from_an_anvil_account_pays_the_order(chain_client, devnet):
    anvil = node_of(devnet, "ethereum")
    customer, order, payment = order_with_instructions(chain_client, "ETH", "ethereum")

    tx = {"from": anvil.accounts[0], "to": payment["address"], "value": hex(int(payment["amount_base_units"]))}
    txid = anvil.rpc("eth_sendTransaction", tx)
    assert anvil.wait_receipt(txid)["status"] == "0x1"  # anvil mined it in a block of its own: 1 confirmation
    wait_confirming(chain_client, customer, payment)

    anvil.rpc("anvil_mine", hex(CHAIN_CONFIRMATIONS - 1))
    wait_paid(chain_client, customer, order, payment, txid)


def test_usdt_sent_on_anvil_pays_the_order(chain_client, devnet):
    anvil = node_of(devnet, "ethereum")
    if "USDT/ethereum" not in devnet.tokens:
        pytest.skip(f"no test tokens: {devnet.skipped.get('ethereum tokens')}")
    customer, order, payment = order_with_instructions(chain_client, "USDT", "ethereum")
    assert payment["uri"].startswith(f"ethereum:{devnet.tokens['USDT/ethereum']}")

    txid = transfer_token(anvil, devnet.tokens["USDT/ethereum"], payment["address"], int(payment["amount_base_units"]))
    assert anvil.wait_receipt(txid)["status"] == "0x1"
    wait_confirming(chain_client, customer, payment)
    anvil.rpc("anvil_mine", hex(CHAIN_CONFIRMATIONS - 1))
    wait_paid(chain_client, customer, order, payment, txid)


def test_each_watched_network_is_offered_and_the_others_are_off(chain_client, devnet):
    methods = {(m["asset"], m["network"]): m for m in chain_client.get("/api/v1/payment-methods").json()}
    for (asset, network), method in methods.items():
        expected = network in devnet.up and (asset in ("BTC", "LTC", "ETH") or f"{asset}/{network}" in devnet.tokens)
        assert method["available"] is expected, method
        if not expected:
            assert method["reason"] == "disabled"


def test_readiness_reports_each_running_watcher_following(chain_client, devnet):
    watchers = chain_client.get("/readyz").json()["watchers"]
    assert {network: report["state"] for network, report in watchers.items()} == dict.fromkeys(devnet.up, "following")
    assert all(isinstance(report["degraded"], list) for report in watchers.values())
