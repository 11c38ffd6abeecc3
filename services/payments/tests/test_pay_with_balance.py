"""Paying an order from the balance, in memory: once, never beyond what the balance holds."""

from datetime import UTC, datetime

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import BalanceDebited, PaymentSettled
from kernodeck_payments.domain.extensions import PayableExtension
from kernodeck_payments.domain.orders import PayableOrder
from kernodeck_payments.use_cases.balance import (
    BALANCE_HOLD,
    pay_extension_from_balance,
    pay_extension_with_balance,
    pay_order_from_balance,
    pay_with_balance,
)
from services.payments.tests.memory import balance_units, intake_units
from services.payments.tests.test_instructions import EXTENSION, Clock, Orders, Provisioning
from services.payments.tests.test_open_payment import board

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
ORDER = PayableOrder("o1", "acc1", "awaiting_payment", 18_900)


def test_an_order_paid_from_the_balance_is_settled_once():
    units = balance_units(acc1=20_000)
    assert pay_with_balance(units, "acc1", ORDER, T0) == {
        "payment_id": "balance-o1",
        "order_id": "o1",
        "extension_id": None,
        "amount_usd_cents": 18_900,
    }
    with pytest.raises(ServiceError) as caught:
        pay_with_balance(units, "acc1", ORDER, T0)
    assert (caught.value.code, caught.value.detail) == ("invalid_state", "this order was already paid from the balance")

    assert units.state.available == {"acc1": 1_100}
    [settled] = units.of(PaymentSettled)
    assert (settled.payment_id, settled.order_id, settled.amount_usd_cents, settled.method) == (
        "balance-o1",
        "o1",
        18_900,
        "balance",
    )
    [debited] = units.of(BalanceDebited)
    assert (debited.account_id, debited.amount_usd_cents, debited.order_id, debited.extension_id) == (
        "acc1",
        18_900,
        "o1",
        None,
    )


@pytest.mark.parametrize("available", [0, 18_899])
def test_a_balance_short_of_the_total_pays_nothing(available):
    units = balance_units(acc1=available)
    with pytest.raises(ServiceError) as caught:
        pay_with_balance(units, "acc1", ORDER, T0)
    assert caught.value.code == "insufficient_balance"
    assert (units.state.available, units.state.keys, units.emitted) == ({"acc1": available}, set(), [])


def test_exactly_the_total_pays():
    units = balance_units(acc1=18_900)
    pay_with_balance(units, "acc1", ORDER, T0)
    assert units.state.available == {"acc1": 0}


def test_an_extension_paid_from_the_balance_names_its_order_and_is_paid_once():
    units = balance_units(acc1=50_000)
    extension = PayableExtension("x1", "o1", "acc1", 42_000, T0)
    assert pay_extension_with_balance(units, "acc1", extension, T0)["payment_id"] == "balance-x1"
    with pytest.raises(ServiceError) as caught:
        pay_extension_with_balance(units, "acc1", extension, T0)
    assert caught.value.detail == "this extension was already paid from the balance"
    assert units.state.available == {"acc1": 8_000}
    [settled] = units.of(PaymentSettled)
    assert (settled.order_id, settled.extension_id, settled.amount_usd_cents) == ("o1", "x1", 42_000)
    [debited] = units.of(BalanceDebited)
    assert (debited.order_id, debited.extension_id) == ("o1", "x1")
    # the order's own payment from the balance is another debit: both are taken
    pay_with_balance(units, "acc1", PayableOrder("o1", "acc1", "awaiting_payment", 8_000), T0)
    assert units.state.available == {"acc1": 0}


# --- as the service calls them: the order payable and its GPUs held first, the extension's copy waited for ------

HELD = PayableOrder("o1", "acc1", "awaiting_payment", 18_900, model_id="h100", total_gpus=2, ssh_key_given=True)


@pytest.mark.parametrize(("available", "released"), [(18_900, []), (18_899, ["o1"])])
def test_an_orders_gpus_are_held_as_paid_then_given_back_when_the_balance_is_short(available, released):
    units, provisioning = balance_units(acc1=available), Provisioning()
    intake = intake_units(board(), (), HELD)
    try:
        paid = pay_order_from_balance(units, intake, Orders(), provisioning, "acc1", "o1", lambda: T0)
        assert paid["payment_id"] == "balance-o1"
    except ServiceError as refused:
        assert refused.code == "insufficient_balance"
    assert provisioning.holds == [("o1", T0 + BALANCE_HOLD, True)]
    assert provisioning.released == released


def test_an_order_not_payable_is_neither_held_nor_debited():
    units, provisioning = balance_units(acc1=50_000), Provisioning()
    with pytest.raises(ServiceError) as caught:
        pay_order_from_balance(units, intake_units(board()), Orders(), provisioning, "acc1", "o1", lambda: T0)
    assert caught.value.code == "not_found"
    assert (provisioning.holds, units.emitted) == ([], [])


def test_an_extension_paid_from_the_balance_is_its_copy_once_it_came():
    units, clock = balance_units(acc1=50_000), Clock()
    intake = intake_units(board(), (), EXTENSION)
    paid = pay_extension_from_balance(units, intake, "acc1", "x1", lambda: T0, clock, clock.sleep)
    assert (paid["payment_id"], paid["amount_usd_cents"]) == ("balance-x1", 5_000)
    with pytest.raises(ServiceError) as caught:
        pay_extension_from_balance(units, intake, "acc1", "x2", lambda: T0, clock, clock.sleep)
    assert caught.value.code == "not_found"
