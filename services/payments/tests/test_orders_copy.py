"""Payments' copy of the orders, from orders' events on the broker: what it lets a customer pay."""

from datetime import UTC, datetime, timedelta

import eventlet

from kernodeck_contracts.events import OrderCreated, OrderStatusChanged
from services.payments.tests.helpers import code_of, refusal

ACC = "acc1"


def created(order_id: str, at: datetime) -> OrderCreated:
    return OrderCreated(
        order_id=order_id,
        account_id=ACC,
        model_id="h100",
        duration_days=3,
        lots=1,
        total_gpus=1,
        preparation="ubuntu",
        total_usd_cents=18_900,
        occurred_at=at,
    )


def changed(order_id: str, status: str, at: datetime) -> OrderStatusChanged:
    return OrderStatusChanged(
        order_id=order_id, account_id=ACC, status=status, previous_status="awaiting_payment", occurred_at=at
    )


def test_a_status_change_arriving_before_the_order_is_kept(payments_ready, watcher):
    now = datetime.now(UTC)
    watcher.deliver(changed("o1", "cancelled", now + timedelta(seconds=1)))
    assert code_of(payments_ready.create_order_payment, ACC, "o1", "BTC", "bitcoin") == "not_found"

    watcher.deliver(created("o1", now))
    refused = refusal(payments_ready.create_order_payment, ACC, "o1", "BTC", "bitcoin")
    assert (refused.code, refused.detail) == ("invalid_state", "the order is cancelled, not awaiting payment")


def test_an_older_status_change_does_not_undo_a_newer_one(payments_ready, watcher):
    now = datetime.now(UTC)
    watcher.deliver(created("o1", now))
    watcher.deliver(changed("o1", "provisioning", now + timedelta(seconds=2)))
    watcher.deliver(changed("o1", "paid", now + timedelta(seconds=1)))
    assert refusal(payments_ready.create_order_payment, ACC, "o1", "BTC", "bitcoin").detail == (
        "the order is provisioning, not awaiting payment"
    )


def test_an_order_asked_for_just_before_its_event_arrives_is_waited_for(payments_ready, watcher):
    event = created("o2", datetime.now(UTC))
    later = eventlet.spawn_after(0.3, watcher.publish, event)
    payment = payments_ready.create_order_payment(ACC, "o2", "BTC", "bitcoin")
    later.wait()
    assert (payment["order_id"], payment["amount_usd_cents"]) == ("o2", 18_900)
