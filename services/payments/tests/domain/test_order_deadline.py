"""An order's intent never outlives the order: its deadline, on both sides of each bound."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_payments.domain.orders import PayableOrder, intent_deadline

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)
TTL, SHORTEST = timedelta(minutes=30), timedelta(minutes=10)


def order(lapses_in: timedelta | None) -> PayableOrder:
    return PayableOrder("o1", "acc1", "awaiting_payment", 18_900, None if lapses_in is None else NOW + lapses_in)


@pytest.mark.parametrize(
    ("lapses_in", "deadline"),
    [
        (None, NOW + TTL),  # an order without a deadline of its own
        (TTL + timedelta(microseconds=1), NOW + TTL),
        (TTL, NOW + TTL),
        (TTL - timedelta(microseconds=1), NOW + TTL - timedelta(microseconds=1)),  # the order's own deadline
        (SHORTEST, NOW + SHORTEST),
    ],
)
def test_an_intent_ends_at_the_ttl_or_with_the_order_whichever_comes_first(lapses_in, deadline):
    assert intent_deadline(order(lapses_in), NOW, TTL, SHORTEST) == deadline


@pytest.mark.parametrize("lapses_in", [SHORTEST - timedelta(microseconds=1), timedelta(0), -timedelta(hours=1)])
def test_no_intent_with_too_little_time_left_before_the_order_lapses(lapses_in):
    with pytest.raises(ServiceError) as caught:
        intent_deadline(order(lapses_in), NOW, TTL, SHORTEST)
    assert caught.value.code == "invalid_state"
    assert caught.value.detail.endswith("too little time is left to pay it by crypto")
