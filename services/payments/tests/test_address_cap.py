"""Addresses cannot be drained: an account is given at most a few addresses a network within a window while
nothing of their asset reaches them; a payment frees a place, a foreign token's dust does not."""

from datetime import timedelta

import pytest

from kernodeck_contracts.events import TransferSeen
from services.payments.tests.helpers import code_of, now, refusal, txid
from services.payments.tests.test_intents import SOLANA_POOL, fill_solana_pool

ACC = "acc1"
UNKNOWN_TOKEN = "0x000000000000000000000000000000000000dEaD"
UNKNOWN_MINT = "Dust1111111111111111111111111111111111111111"


@pytest.fixture
def changed_settings() -> dict:
    return {"unfunded_addresses_per_network": 2, "unfunded_addresses_window_hours": 24}


def topup(payments, network="bitcoin", asset="BTC", account=ACC) -> dict:
    return payments.create_topup(account, 10_000, asset, network)["payment"]


def test_two_unfunded_addresses_a_network_then_the_account_waits_for_the_window(payments_ready, payments, payments_db):
    first = topup(payments)
    topup(payments)  # 2 of 2
    refused = refusal(payments.create_topup, ACC, 10_000, "BTC", "bitcoin")
    assert refused.code == "too_many_requests" and 0 < refused.retry_after <= 24 * 3600
    assert topup(payments, "litecoin", "LTC")["status"] == "awaiting_transfer"  # a cap per network
    assert topup(payments, account="acc2")["status"] == "awaiting_transfer"  # and per account
    payments_db.execute(
        "UPDATE payment_intents SET created_at = :at WHERE id = :id", at=now() - timedelta(hours=24), id=first["id"]
    )
    assert topup(payments)["status"] == "awaiting_transfer"  # the first left the window


@pytest.mark.parametrize(
    ("asset", "network", "foreign_token"),
    [("ETH", "ethereum", UNKNOWN_TOKEN), ("SOL", "solana", UNKNOWN_MINT)],
    ids=["unknown ERC-20", "unknown SPL mint"],
)
def test_a_payment_frees_a_place_and_a_foreign_tokens_dust_does_not(
    payments_ready, payments, payments_db, watcher, asset, network, foreign_token
):
    fill_solana_pool(payments_db, SOLANA_POOL)
    dusted, paid = topup(payments, network, asset), topup(payments, network, asset)
    watcher.send(
        TransferSeen, network=network, txid=txid(), index=0, address=dusted["address"], amount=1, token=foreign_token
    )
    assert code_of(payments.create_topup, ACC, 10_000, asset, network) == "too_many_requests"
    watcher.send(TransferSeen, network=network, txid=txid(), index=0, address=paid["address"], amount=1)
    assert topup(payments, network, asset)["status"] == "awaiting_transfer"
