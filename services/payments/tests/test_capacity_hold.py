"""Payments holds the order's GPUs (provisioning's hold RPC, here its double) before instructions or a debit,
and gives back what was paid for an order provisioning could not deliver."""

from nameko.standalone.events import event_dispatcher

from kernodeck_contracts.events import ProvisioningFailed
from kernodeck_kit.testing import wait_until
from services.payments.tests.helpers import code_of, confirm

ACC = "acc1"
SAT_PER_CENT = 20  # satoshi per cent at 50,000 USD/BTC


def settle_topup(payments, watcher, usd_cents: int) -> None:
    topup = payments.create_topup(ACC, usd_cents, "BTC", "bitcoin")
    confirm(watcher, topup["payment"], usd_cents * SAT_PER_CENT)


def test_no_capacity_no_instructions_and_the_order_stays_payable(
    payments_ready, payments, new_order, provisioning_double
):
    order = new_order(ACC, lots=2)
    provisioning_double.free_gpus = 1
    assert code_of(payments.create_order_payment, ACC, order["id"], "BTC", "bitcoin") == "out_of_capacity"
    assert payments.list_order_payments(ACC, order["id"]) == []
    provisioning_double.free_gpus = 2
    assert payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")["status"] == "awaiting_transfer"
    assert provisioning_double.holds == {order["id"]: 2}


def test_paying_with_the_balance_without_capacity_debits_nothing(
    payments_ready, payments, watcher, new_order, provisioning_double
):
    settle_topup(payments, watcher, 50_000)
    order = new_order(ACC)
    provisioning_double.free_gpus = 0
    assert code_of(payments.pay_with_balance, ACC, order["id"]) == "out_of_capacity"
    assert payments.get_balance(ACC)["available_usd_cents"] == 50_000


def test_a_debit_that_fails_gives_back_the_hold_it_took(payments_ready, payments, new_order, provisioning_double):
    order = new_order(ACC)
    assert code_of(payments.pay_with_balance, ACC, order["id"]) == "insufficient_balance"
    assert provisioning_double.released == [order["id"]]
    assert provisioning_double.holds == {}


def test_a_failed_debit_keeps_a_hold_an_open_intent_needs(payments_ready, payments, new_order, provisioning_double):
    order = new_order(ACC)
    payments.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    assert code_of(payments.pay_with_balance, ACC, order["id"]) == "insufficient_balance"
    assert provisioning_double.released == []


def test_an_order_that_could_not_be_delivered_is_refunded_to_the_balance_once(
    payments_ready, payments, watcher, new_order, configs
):
    settle_topup(payments, watcher, 50_000)
    order = new_order(ACC)
    payments.pay_with_balance(ACC, order["id"])
    assert payments.get_balance(ACC)["available_usd_cents"] == 50_000 - 18_900
    failed = ProvisioningFailed(order_id=order["id"], account_id=ACC, reason="no_node_passed: test")
    dispatch = event_dispatcher(configs["payments"])
    for _ in range(2):  # a redelivery refunds nothing more
        dispatch(failed.source, failed.type, failed.to_message())
    wait_until(lambda: payments.get_balance(ACC)["available_usd_cents"] == 50_000, what="the refund")
    refunds = [e for e in payments.list_ledger(ACC)["items"] if e["reason"] == "refused_payment"]
    assert [(e["amount_usd_cents"], e["ref"]) for e in refunds] == [(18_900, f"balance-{order['id']}")]


def test_an_intent_refused_after_the_hold_gives_the_hold_back(payments_ready, payments, new_order, provisioning_double):
    order = new_order(ACC)
    # No Solana address was imported in these tests: the intent is refused once the GPUs are held.
    assert code_of(payments.create_order_payment, ACC, order["id"], "SOL", "solana") == "method_unavailable"
    assert provisioning_double.released == [order["id"]]


def test_no_instructions_and_no_debit_for_an_order_that_cannot_be_delivered(
    payments_ready, payments, watcher, new_order, provisioning_double
):
    settle_topup(payments, watcher, 50_000)
    provisioning_double.keyless.add(ACC)
    keyless = new_order(ACC)
    assert code_of(payments.create_order_payment, ACC, keyless["id"], "BTC", "bitcoin") == "ssh_key_required"
    assert code_of(payments.pay_with_balance, ACC, keyless["id"]) == "ssh_key_required"
    assert payments.list_order_payments(ACC, keyless["id"]) == []
    assert payments.get_balance(ACC)["available_usd_cents"] == 50_000
    assert provisioning_double.holds == {}  # refused before any GPU is held

    with_its_key = new_order(ACC, ssh_public_key="ssh-ed25519 AAAA-order")
    assert payments.create_order_payment(ACC, with_its_key["id"], "BTC", "bitcoin")["status"] == "awaiting_transfer"
    provisioning_double.keyless.clear()  # the customer saved a key on the account
    assert payments.pay_with_balance(ACC, keyless["id"])["order_id"] == keyless["id"]
