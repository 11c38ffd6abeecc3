"""Presenters and request bodies, without a broker: exact amounts, strict USD text."""

import pytest
from pydantic import ValidationError

from gateway.tests.rows import order_row, payment_row
from kernodeck_gateway.schemas import (
    NewTopup,
    ReviewResolution,
    format_signed_usd,
    present_balance,
    present_ledger_entry,
    present_order,
    present_payment,
    present_topup,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("cents", "text"), [(-10000, "-100.00"), (-1, "-0.01"), (0, "0.00"), (12345, "123.45")])
def test_ledger_amounts_are_signed(cents, text):
    assert format_signed_usd(cents) == text
    entry = {"at": "2025-01-01T00:00:00Z", "amount_usd_cents": cents, "reason": "topup", "ref": "t1"}
    assert present_ledger_entry(entry) == {"at": entry["at"], "amount_usd": text, "reason": "topup", "ref": "t1"}


TOPUP = {"asset": "BTC", "network": "bitcoin"}


# Which amounts make a top-up is for payments to say; the gateway only reads the USD text.
@pytest.mark.parametrize(("text", "cents"), [("100", 10000), ("10000", 1000000), ("100.0", 10000), ("150", 15000)])
def test_a_topup_amount_is_usd_text_read_as_cents(text, cents):
    assert NewTopup.model_validate({**TOPUP, "amount_usd": text}).amount_usd == cents


@pytest.mark.parametrize("amount", ["-100", "1e2", "", " 100", "100.000", "10,000", 100, 100.0, -100, None])
def test_a_topup_amount_that_is_not_usd_text_is_refused_on_amount_usd(amount):
    with pytest.raises(ValidationError) as refused:
        NewTopup.model_validate({**TOPUP, "amount_usd": amount})
    assert [e["loc"] for e in refused.value.errors()] == [("amount_usd",)]


def test_a_topup_body_refuses_unknown_fields():
    with pytest.raises(ValidationError) as refused:
        NewTopup.model_validate({**TOPUP, "amount_usd": "100", "account_id": "someone"})
    assert [e["loc"] for e in refused.value.errors()] == [("account_id",)]


def test_a_review_resolution_takes_an_optional_usd_amount():
    assert ReviewResolution.model_validate({"decision": "dismissed", "note": "spam"}).amount_usd is None
    credited = ReviewResolution.model_validate({"decision": "credit_to_balance", "amount_usd": "12.34", "note": "ok"})
    assert credited.amount_usd == 1234
    with pytest.raises(ValidationError):
        ReviewResolution.model_validate({"decision": "credit_to_balance", "amount_usd": 12.34, "note": "ok"})
    with pytest.raises(ValidationError):
        ReviewResolution.model_validate({"decision": "approve", "note": "ok"})


def test_a_payment_shows_amounts_as_strings_and_only_its_own_reference():
    assert present_payment(payment_row()) == {
        "id": "p1",
        "purpose": "order",
        "order_id": "o1",
        "asset": "ETH",
        "network": "ethereum",
        "address": "0x52908400098527886E0F7030069857D2E4169EE7",
        "amount": "0.0325",
        "amount_base_units": "32500000000000000",
        "amount_usd": "100.00",
        "rate": "3076.92",
        "uri": "ethereum:0x52908400098527886E0F7030069857D2E4169EE7?value=32500000000000000",
        "created_at": "2025-01-01T00:00:00Z",
        "expires_at": "2025-01-01T01:00:00Z",
        "status": "confirming",
        "reported_at": None,
        "received": {"amount": "0.032500000000000001", "confirmed_amount": "0.000000000000000001"},
        "transfers": [
            {
                "txid": "0xabc",
                "amount": "0.032500000000000001",
                "confirmations": 3,
                "required_confirmations": 12,
                "status": "confirming",
            }
        ],
        "credits": [],
        "checks": [],
    }


def test_a_topup_shows_its_payment_with_the_topup_reference():
    topup_payment = payment_row(purpose="topup", order_id=None, topup_id="t1", transfers=[])
    shown = present_topup(
        {"id": "t1", "amount_usd_cents": 50000, "status": "pending", "created_at": "x", "payment": topup_payment}
    )
    assert shown["amount_usd"] == "500.00"
    assert shown["payment"]["topup_id"] == "t1" and shown["payments"] == [shown["payment"]]
    assert "order_id" not in shown["payment"]


def test_balance_in_dollars():
    assert present_balance({"available_usd_cents": 0, "pending_usd_cents": 10000}) == {
        "available_usd": "0.00",
        "pending_usd": "100.00",
    }


def test_an_order_shows_its_payments():
    order = order_row()
    assert present_order(order, [payment_row()])["payments"] == [present_payment(payment_row())]
    assert present_order(order, [])["payments"] == []
