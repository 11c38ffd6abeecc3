from datetime import UTC, datetime, timedelta
from itertools import product

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.rpc import Quote
from kernodeck_contracts.timeline import Said, TimelineCode
from kernodeck_orders.domain import (
    OrderStatus,
    cancel_by_customer,
    is_due_for_cancellation,
    new_order,
    summary_of,
    transition,
)

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
S = OrderStatus
# Written out rather than read from the module: this is the specification.
ALLOWED = {
    (S.AWAITING_PAYMENT, S.PAID),
    (S.AWAITING_PAYMENT, S.CANCELLED),
    (S.PAID, S.PROVISIONING),
    (S.PAID, S.FAILED),
    (S.PAID, S.CANCELLED),
    (S.PROVISIONING, S.READY),
    (S.PROVISIONING, S.FAILED),
    (S.READY, S.ENDED),
    (S.READY, S.FAILED),
}
REFUSED = set(product(S, S)) - ALLOWED
BECAUSE = Said(TimelineCode.NOTE, {"text": "because"})
QUOTE = Quote(
    **{
        "model": "b200",
        "model_name": "NVIDIA B200",
        "backend": "cuda",
        "duration_days": 7,
        "lots": 2,
        "gpus_per_lot": 2,
        "total_gpus": 4,
        "preparation": "pytorch",
        "lot_price_usd_cents": 199900,
        "total_usd_cents": 399800,
        "available": True,
    }
)


def order_in(status, created_at=T0):
    order = new_order("o1", "a1", summary_of(QUOTE), created_at)
    order.status = status
    return order


def test_a_new_order_awaits_payment_with_a_created_entry():
    order = new_order("o1", "a1", summary_of(QUOTE), T0)
    assert order.status == S.AWAITING_PAYMENT
    assert [(e.at, e.kind) for e in order.timeline] == [(T0, "created")]
    assert order.created_at == order.updated_at == T0


def test_the_summary_keeps_the_quote_but_not_its_availability():
    summary = summary_of(QUOTE)
    assert (summary.total_gpus, summary.total_usd_cents) == (4, 399800)
    assert not hasattr(summary, "available")


@pytest.mark.parametrize(("current", "target"), sorted(ALLOWED))
def test_allowed_moves(current, target):
    order = order_in(current)
    later = T0 + timedelta(hours=1)
    entry = transition(order, target, later, BECAUSE)
    assert order.status == target
    assert order.updated_at == later
    assert order.timeline[-1] == entry
    assert (entry.at, entry.kind, entry.said) == (later, target.value, BECAUSE)


@pytest.mark.parametrize(("current", "target"), sorted(REFUSED))
def test_refused_moves_change_nothing(current, target):
    order = order_in(current)
    with pytest.raises(ServiceError) as caught:
        transition(order, target, T0 + timedelta(hours=1), BECAUSE)
    assert caught.value.code == "invalid_state"
    assert (order.status, order.updated_at, len(order.timeline)) == (current, T0, 1)


@pytest.mark.parametrize("final", [S.ENDED, S.CANCELLED, S.FAILED])
def test_final_statuses_go_nowhere(final):
    assert all((final, target) in REFUSED for target in S)


def test_a_customer_cancels_an_unpaid_order():
    order = order_in(S.AWAITING_PAYMENT)
    entry = cancel_by_customer(order, T0)
    assert order.status == S.CANCELLED
    assert entry.said == Said(TimelineCode.CANCELLED_BY_CUSTOMER)
    assert entry.detail == "Cancelled at your request; nothing is due"


@pytest.mark.parametrize("status", [s for s in S if s != S.AWAITING_PAYMENT])
def test_a_customer_cannot_cancel_past_awaiting_payment(status):
    # paid -> cancelled is a legal move, but not one the customer makes.
    order = order_in(status)
    with pytest.raises(ServiceError) as caught:
        cancel_by_customer(order, T0)
    assert caught.value.code == "invalid_state"
    assert order.status == status


@pytest.mark.parametrize(
    ("status", "age", "due"),
    [
        (S.AWAITING_PAYMENT, timedelta(minutes=59), False),
        (S.AWAITING_PAYMENT, timedelta(minutes=60), True),
        (S.AWAITING_PAYMENT, timedelta(days=3), True),
        (S.PAID, timedelta(days=3), False),
        (S.CANCELLED, timedelta(days=3), False),
    ],
)
def test_due_for_cancellation(status, age, due):
    order = order_in(status, created_at=T0 - age)
    assert is_due_for_cancellation(order, T0, timedelta(minutes=60)) is due
