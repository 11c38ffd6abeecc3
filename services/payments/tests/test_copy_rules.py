"""Payments' copies of orders and extensions, in memory: each event applied once, the newest status kept
whatever the order the events come in. test_orders_copy.py and test_extensions_copy.py run the same use cases
over the broker and PostgreSQL."""

from datetime import timedelta

import pytest

from kernodeck_contracts.events import ExtensionConfirmed, ExtensionPaid, OrderCreated, OrderStatusChanged
from kernodeck_payments.use_cases import copies
from services.payments.tests.memory import copies_units
from services.payments.tests.test_open_payment import T0

pytestmark = pytest.mark.unit

CREATED = OrderCreated(
    order_id="o1", account_id="acc1", model_id="h100", duration_days=7, lots=1, total_gpus=2,
    preparation="pytorch", total_usd_cents=18_900, occurred_at=T0,
)  # fmt: skip


def changed(status: str, at, order_id: str = "o1") -> OrderStatusChanged:
    return OrderStatusChanged(order_id=order_id, account_id="acc1", status=status, previous_status="", occurred_at=at)


def test_an_order_is_copied_awaiting_payment_once():
    units = copies_units()
    copies.order_created(units, CREATED)
    copies.order_created(units, CREATED)  # redelivered
    order = units.state.orders["o1"]
    assert (order.status, order.total_usd_cents, order.total_gpus, order.ssh_key_given) == (
        "awaiting_payment",
        18_900,
        2,
        False,
    )


def test_a_status_that_came_before_its_order_is_kept():
    units = copies_units()
    copies.order_statuses_changed(units, [changed("cancelled", T0 + timedelta(seconds=1))])
    copies.order_created(units, CREATED)
    assert (units.state.orders["o1"].status, units.state.orders["o1"].total_usd_cents) == ("cancelled", 18_900)


@pytest.mark.parametrize(("later_by", "kept"), [(-1, "paid"), (0, "cancelled"), (1, "cancelled")])
def test_the_newest_status_is_kept_and_of_two_as_new_the_later(later_by, kept):
    units = copies_units()
    copies.order_created(units, CREATED)
    paid_at = T0 + timedelta(minutes=5)
    copies.order_statuses_changed(units, [changed("paid", paid_at)])
    copies.order_statuses_changed(units, [changed("cancelled", paid_at + timedelta(seconds=later_by))])
    assert units.state.orders["o1"].status == kept


def test_a_batch_keeps_each_orders_newest_status_whatever_the_order_of_its_events():
    units = copies_units()
    newer, older = changed("cancelled", T0 + timedelta(minutes=2)), changed("paid", T0 + timedelta(minutes=1))
    copies.order_statuses_changed(units, [newer, changed("paid", T0, order_id="o2"), older])
    assert {o.order_id: o.status for o in units.state.orders.values()} == {"o1": "cancelled", "o2": "paid"}


def test_an_extension_is_copied_once_and_marked_paid():
    units = copies_units()
    confirmed = ExtensionConfirmed(
        extension_id="x1", order_id="o1", account_id="acc1", extra_days=3, price_usd_cents=5_000, due_by=T0
    )
    copies.extension_confirmed(units, confirmed)
    copies.extension_paid(units, ExtensionPaid(extension_id="x1", order_id="o1", account_id="acc1", extra_days=3))
    copies.extension_confirmed(units, confirmed.model_copy(update={"event_id": "again", "price_usd_cents": 1}))
    extension = units.state.extensions["x1"]
    assert (extension.price_usd_cents, extension.paid) == (5_000, True)
