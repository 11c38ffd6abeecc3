"""Refunds in memory: each payment given back once, whichever way it comes back, never beyond what its order
still has in sales. test_refunds.py runs the same use cases over the broker and PostgreSQL."""

from datetime import UTC, datetime

import pytest

from kernodeck_contracts.events import BalanceCredited, ExtensionPaymentRefused, PaymentRefused, ProvisioningFailed
from kernodeck_payments.use_cases import refunds
from services.payments.tests.memory import refund_units

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)


def refused(payment_id: str, cents: int) -> PaymentRefused:
    return PaymentRefused(
        order_id="o1", account_id="acc1", payment_id=payment_id, amount_usd_cents=cents, reason="order_paid"
    )


def failed() -> ProvisioningFailed:
    return ProvisioningFailed(order_id="o1", account_id="acc1", reason="no_capacity: none free")


def test_a_refused_payment_is_given_back_once_even_redelivered_or_refused_again():
    units = refund_units(o1=[("p1", 5_000)])
    event = refused("p1", 5_000)
    assert refunds.payment_refused(units, event, T0) == 5_000
    assert refunds.payment_refused(units, event, T0) == 0  # redelivered
    assert refunds.payment_refused(units, refused("p1", 5_000), T0) == 0  # refused again, another event
    assert units.state.balances == {"acc1": 5_000}
    assert [e.amount_usd_cents for e in units.of(BalanceCredited)] == [5_000]


@pytest.mark.parametrize(("asked", "given"), [(4_999, 4_999), (5_000, 5_000), (5_001, 5_000)])
def test_a_refused_payment_is_given_back_up_to_what_its_order_has_in_sales(asked, given):
    units = refund_units(o1=[("p1", 5_000)])
    assert refunds.payment_refused(units, refused("p1", asked), T0) == given
    assert units.state.balances == {"acc1": given}


def test_a_payment_its_order_has_nothing_left_for_is_not_credited():
    units = refund_units()
    assert refunds.payment_refused(units, refused("p1", 5_000), T0) == 0
    assert units.state.balances == {}
    assert units.of(BalanceCredited) == []


def test_a_failed_delivery_gives_back_every_payment_not_given_back_already():
    units = refund_units(o1=[("p1", 3_000), ("p2", 2_000), ("balance-o1", 1_000)])
    assert refunds.payment_refused(units, refused("p2", 2_000), T0) == 2_000
    event = failed()
    assert refunds.provisioning_failed(units, event, T0) == 4_000
    assert refunds.provisioning_failed(units, event, T0) == 0  # redelivered
    assert refunds.provisioning_failed(units, failed(), T0) == 0  # reported twice
    assert refunds.payment_refused(units, refused("p1", 3_000), T0) == 0  # refused after: refunded already
    assert units.state.balances == {"acc1": 6_000}
    assert [e.amount_usd_cents for e in units.of(BalanceCredited)] == [2_000, 3_000, 1_000]


def test_an_order_with_nothing_in_sales_refunds_nothing_on_failure():
    units = refund_units()
    assert refunds.provisioning_failed(units, failed(), T0) == 0
    assert units.state.balances == {}


def test_an_extension_payment_refused_is_given_back_once():
    units = refund_units()
    event = ExtensionPaymentRefused(
        extension_id="x1", order_id="o1", account_id="acc1", payment_id="p9", amount_usd_cents=7_000, reason="late"
    )
    refunds.extension_payment_refused(units, event, T0)
    refunds.extension_payment_refused(units, event, T0)  # redelivered
    refunds.extension_payment_refused(units, event.model_copy(update={"event_id": "again"}), T0)  # refused again
    assert units.state.balances == {"acc1": 7_000}
    assert [e.amount_usd_cents for e in units.of(BalanceCredited)] == [7_000]
