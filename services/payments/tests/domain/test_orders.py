import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_payments.domain.orders import PayableOrder, check_payable

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
