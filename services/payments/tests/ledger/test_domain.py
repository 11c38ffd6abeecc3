from datetime import UTC, datetime

import pytest

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_payments.ledger.domain import (
    EXTERNAL_CRYPTO,
    SALES_ORDERS,
    Entry,
    Reason,
    crypto_order_payment,
    customer_account,
    customer_credit,
    order_debit,
)

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)


def refused_field(build, *args) -> str:
    """The field named by the validation error that `build(*args)` raises."""
    with pytest.raises(ServiceError) as refused:
        build(*args)
    assert refused.value.code == ErrorCode.VALIDATION_ERROR
    return refused.value.errors[0]["field"]


def test_a_credit_moves_money_from_crypto_to_the_customer():
    entry = customer_credit("c1", 10_000, "topup", "topup:i1", "i1", T0)
    assert (entry.debit_account, entry.credit_account) == (EXTERNAL_CRYPTO, "customer:c1")
    assert entry.reason is Reason.TOPUP
    assert entry.customer_id == "c1"


def test_an_order_debit_moves_money_from_the_customer_to_sales():
    entry = order_debit("c1", 2_500, "o1", "order:o1", T0)
    assert (entry.debit_account, entry.credit_account, entry.ref) == ("customer:c1", SALES_ORDERS, "o1")
    assert entry.customer_id == "c1"


def test_an_order_paid_by_crypto_concerns_no_customer():
    entry = crypto_order_payment(2_500, "o1", "order:o1", T0)
    assert (entry.debit_account, entry.credit_account) == (EXTERNAL_CRYPTO, SALES_ORDERS)
    assert entry.customer_id is None


@pytest.mark.parametrize("amount", [0, -1, True, 1.5, "100", None])
def test_an_amount_is_a_positive_whole_number_of_cents(amount):
    assert refused_field(order_debit, "c1", amount, "o1", "order:o1", T0) == "amount_cents"


def test_an_entry_needs_two_different_accounts():
    assert (
        refused_field(Entry, SALES_ORDERS, SALES_ORDERS, 100, Reason.ORDER_PAYMENT, "k", "o1", T0) == "credit_account"
    )


@pytest.mark.parametrize("key", ["", "k" * 201, None])
def test_an_entry_needs_an_idempotency_key(key):
    assert refused_field(order_debit, "c1", 100, "o1", key, T0) == "idempotency_key"


def test_an_order_payment_is_no_reason_to_credit_a_balance():
    assert refused_field(customer_credit, "c1", 100, "order_payment", "k", "o1", T0) == "reason"
    assert refused_field(customer_credit, "c1", 100, "gift", "k", "o1", T0) == "reason"


@pytest.mark.parametrize("customer_id", ["", "c" * 65])
def test_a_customer_account_needs_a_customer_id(customer_id):
    assert refused_field(customer_account, customer_id) == "customer_id"
