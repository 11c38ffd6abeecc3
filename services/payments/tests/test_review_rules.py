"""An operator's decision on a review item, in memory: a credit once, with a positive amount and a customer to
credit; the other decisions with a note and no amount. test_reviews.py runs it over the broker and PostgreSQL."""

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import BalanceCredited
from kernodeck_payments.domain.reviews import ReviewItem
from kernodeck_payments.use_cases.reviews import resolve_review
from services.payments.tests.memory import review_units
from services.payments.tests.test_open_payment import T0

pytestmark = pytest.mark.unit


def item(review_id: str = "r1", account_id: str | None = "acc1") -> ReviewItem:
    return ReviewItem(
        id=review_id,
        key=f"late:{review_id}",
        reason="late_transfer",
        status="open",
        account_id=account_id,
        created_at=T0,
    )


def refusal(units, *args) -> tuple[str, str | None]:
    with pytest.raises(ServiceError) as caught:
        resolve_review(units, "op1", *args, T0)
    return caught.value.code, caught.value.detail


def test_a_credit_to_the_balance_is_made_once_and_recorded_with_its_operator():
    units = review_units(item())
    resolve_review(units, "op1", "r1", "credit_to_balance", 9_500, "", T0)
    assert refusal(units, "r1", "credit_to_balance", 9_500, "")[0] == "invalid_state"
    assert refusal(units, "r1", "dismissed", None, "twice")[0] == "invalid_state"
    assert units.state.balances == {"acc1": 9_500}
    assert [e.amount_usd_cents for e in units.of(BalanceCredited)] == [9_500]
    assert units.state.decisions == [("r1", "op1", "credit_to_balance")]
    resolved = units.state.items["r1"]
    assert (resolved.status, resolved.amount_usd_cents, resolved.resolved_by) == ("resolved", 9_500, "op1")


@pytest.mark.parametrize(("amount", "code"), [(0, "validation_error"), (1, None), (True, "validation_error")])
def test_a_credit_needs_a_positive_whole_number_of_cents(amount, code):
    units = review_units(item())
    if code is None:
        resolve_review(units, "op1", "r1", "credit_to_balance", amount, "", T0)
        assert units.state.balances == {"acc1": amount}
    else:
        assert refusal(units, "r1", "credit_to_balance", amount, "")[0] == code
        assert units.state.balances == {}


@pytest.mark.parametrize("decision", ["refunded_off_system", "dismissed"])
def test_the_other_decisions_need_a_note_and_take_no_amount(decision):
    units = review_units(item())
    assert refusal(units, "r1", decision, None, "  ")[0] == "validation_error"
    assert refusal(units, "r1", decision, 100, "with an amount")[0] == "validation_error"
    resolve_review(units, "op1", "r1", decision, None, "tx 0xabc", T0)
    assert units.state.items["r1"].decision == decision
    assert units.state.balances == {}


def test_an_item_without_a_customer_cannot_be_credited_and_an_unknown_one_is_not_found():
    units = review_units(item(account_id=None))
    assert refusal(units, "r1", "credit_to_balance", 100, "")[0] == "validation_error"
    assert refusal(units, "r2", "dismissed", None, "no such")[0] == "not_found"
    assert refusal(units, "r1", "closed", None, "what")[0] == "validation_error"
    assert units.state.items["r1"].status == "open"
