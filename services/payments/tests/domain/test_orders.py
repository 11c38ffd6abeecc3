from datetime import UTC, datetime

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import OrderCreated
from kernodeck_payments.domain.orders import PayableOrder, account_key_needed, check_payable, created_order

pytestmark = pytest.mark.unit

OPEN = PayableOrder("o1", "acc1", "awaiting_payment", 18_900)


def test_an_order_awaiting_payment_is_payable_by_its_account():
    assert check_payable(OPEN, "acc1") == OPEN


@pytest.mark.parametrize(
    "order",
    [None, PayableOrder("o1", "acc2", "awaiting_payment", 18_900), PayableOrder("o1", "acc1", "cancelled", None)],
    ids=["unknown", "another account's", "only its status known"],
)
def test_an_order_payments_cannot_see_is_not_found(order):
    with pytest.raises(ServiceError) as caught:
        check_payable(order, "acc1")
    assert (caught.value.code, caught.value.detail) == ("not_found", "no such order")


@pytest.mark.parametrize("status", ["paid", "cancelled", "provisioning"])
def test_an_order_past_awaiting_payment_is_refused_with_its_status(status):
    with pytest.raises(ServiceError) as caught:
        check_payable(PayableOrder("o1", "acc1", status, 18_900), "acc1")
    assert (caught.value.code, caught.value.detail) == ("invalid_state", f"the order is {status}, not awaiting payment")


@pytest.mark.parametrize(
    ("given", "needed"),
    [(False, True), (True, False), (None, False)],
    ids=["no key on the order", "the order's key", "an order copied before keys were kept"],
)
def test_the_accounts_key_is_needed_only_for_an_order_without_one(given, needed):
    order = PayableOrder("o1", "acc1", "awaiting_payment", 18_900, ssh_key_given=given)
    assert account_key_needed(order) is needed


def test_an_order_asked_of_orders_is_the_copy_its_order_created_would_make():
    expires = datetime(2026, 1, 2, tzinfo=UTC)
    event = OrderCreated(
        order_id="o1",
        account_id="acc1",
        model_id="h100",
        duration_days=3,
        lots=2,
        total_gpus=2,
        preparation="ubuntu",
        total_usd_cents=37_800,
        expires_at=expires,
    )
    assert created_order(OrderCreated.from_message(event.to_message()), "paid") == PayableOrder(
        "o1", "acc1", "paid", 37_800, expires, "h100", 2, ssh_key_given=False
    )
