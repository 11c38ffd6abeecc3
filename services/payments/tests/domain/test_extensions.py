"""Which extensions payments takes a payment for: the owner's, unpaid, up to the due date."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_payments.domain.extensions import PayableExtension, check_payable_extension

pytestmark = pytest.mark.unit

DUE = datetime(2026, 12, 3, 12, tzinfo=UTC)
EXTENSION = PayableExtension("x1", "o1", "acc1", 42_000, DUE)


def code(extension, account_id="acc1", now=DUE) -> str:
    with pytest.raises(ServiceError) as caught:
        check_payable_extension(extension, account_id, now)
    return caught.value.code


def test_the_owner_pays_an_unpaid_extension_up_to_its_due_date():
    assert check_payable_extension(EXTENSION, "acc1", DUE) is EXTENSION
    assert code(EXTENSION, now=DUE + timedelta(seconds=1)) == "invalid_state"


def test_another_account_or_an_unknown_extension_is_not_found_and_a_paid_one_is_refused():
    assert code(EXTENSION, account_id="acc2") == "not_found"
    assert code(None) == "not_found"
    assert code(PayableExtension("x1", "o1", "acc1", 42_000, DUE, paid=True)) == "invalid_state"
