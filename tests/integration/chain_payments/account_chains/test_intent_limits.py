"""How many intents one account can hold open on Solana, whose deposit addresses come from a finite pool:
at the limit the next one is refused and takes no address; asking again for the same order and method
gives the open intent back; a paid intent frees its place."""

import pytest
from sqlmodel import Session

from kernodeck_kit.db import make_engine
from kernodeck_payments.store.addresses import solana_pool_left
from services.payments.tests.helpers import refusal
from tests.integration.chain_payments.conftest import ACCOUNT

PER_ACCOUNT = 3
pytestmark = pytest.mark.parametrize("method", [("SOL", "solana")], indirect=True, ids=lambda m: m[1])


@pytest.fixture
def payments_settings(payments_settings):
    return payments_settings.model_copy(update={"open_intents_per_account": PER_ACCOUNT, "open_intents_per_order": 1})


def pool_left(databases) -> int:
    engine = make_engine(databases["payments"])
    try:
        with Session(engine) as session:
            return solana_pool_left(session)
    finally:
        engine.dispose()


def test_the_intent_limit_refuses_the_next_one_without_taking_an_address(
    chain, shop, databases, start_watcher, watching, wait
):
    watcher = start_watcher()
    opened = [shop.order_payment() for _ in range(PER_ACCOUNT)]
    assert len({payment["address"] for _, payment in opened}) == PER_ACCOUNT
    left = pool_left(databases)
    assert left == chain.pool_size - PER_ACCOUNT

    # The same method on the same order, at both limits: the open intent and its address again.
    first_order, first = opened[0]
    again = shop.payments.create_order_payment(ACCOUNT, first_order["id"], "SOL", "solana")
    assert (again["id"], again["address"]) == (first["id"], first["address"])

    extra = shop.orders.create_order(ACCOUNT, "h100", 3, 1, "ubuntu")
    refused = refusal(shop.payments.create_order_payment, ACCOUNT, extra["id"], "SOL", "solana")
    assert refused.code == "invalid_state" and f"{PER_ACCOUNT} open payments" in refused.detail
    assert refusal(shop.payments.create_topup, ACCOUNT, 10_000, "SOL", "solana").code == "invalid_state"
    assert pool_left(databases) == left
    assert shop.payments.list_order_payments(ACCOUNT, extra["id"]) == []

    # A paid intent is no longer open: its place is free again.
    watching(watcher, first)
    chain.pay(first, first["amount_base_units"])
    chain.mine(1)
    shop.wait_paid(first_order)
    # Three slots came at once, more than the test's lag limit: a status the watcher reported before its pass
    # caught up makes the method unavailable until the next one, which is not what this test is about.
    wait(lambda: shop.method()["available"], what="the watcher's report of having caught up")
    freed = shop.payments.create_order_payment(ACCOUNT, extra["id"], "SOL", "solana")
    assert freed["address"] not in {payment["address"] for _, payment in opened}
    assert pool_left(databases) == left - 1
