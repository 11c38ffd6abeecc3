import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_payments.domain.orders import PayableOrder, check_deliverable, check_payable

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


def refused_for_the_key(order: PayableOrder, account_has_key: bool) -> bool:
    asked = []

    def account_key():
        asked.append(True)
        return "ssh-ed25519 AAAA" if account_has_key else None

    try:
        check_deliverable(order, account_key)
    except ServiceError as refused:
        assert (refused.code, refused.errors[0]["field"]) == ("ssh_key_required", "ssh_public_key")
        return True
    finally:
        assert asked == ([True] if order.ssh_key_given is False else [])  # the account asked only when needed
    return False


@pytest.mark.parametrize(
    ("given", "account_has_key", "refused"),
    [(False, False, True), (False, True, False), (True, False, False), (None, False, False)],
    ids=["no key anywhere", "the account's key", "the order's key", "an order copied before keys were kept"],
)
def test_an_order_is_deliverable_with_a_key_on_the_order_or_the_account(given, account_has_key, refused):
    order = PayableOrder("o1", "acc1", "awaiting_payment", 18_900, ssh_key_given=given)
    assert refused_for_the_key(order, account_has_key) is refused
