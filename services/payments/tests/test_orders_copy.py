"""Payments' copy of the orders, from orders' events on the broker: what it lets a customer pay."""

from datetime import UTC, datetime, timedelta

from sqlmodel import Session

from kernodeck_contracts.events import OrderCreated, OrderStatusChanged
from kernodeck_kit.db import make_engine
from kernodeck_kit.doubles import OrdersDouble, ProvisioningDouble
from kernodeck_payments.store.orders import payable_order, record_order_statuses, remember_order
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


def test_an_order_asked_for_before_its_event_arrives_is_taken_from_orders(payments_ready, watcher, payments_db):
    """No wait for the event: orders answers for the order (OrdersDouble here), another customer asking for it is
    told it does not exist, and the event, arriving later, changes nothing of the payment."""
    event = created("o2", datetime.now(UTC))
    OrdersDouble.record(event)
    assert code_of(payments_ready.create_order_payment, "acc2", "o2", "BTC", "bitcoin") == "not_found"
    payment = payments_ready.create_order_payment(ACC, "o2", "BTC", "bitcoin")
    assert (payment["order_id"], payment["amount_usd_cents"]) == ("o2", 18_900)
    assert ProvisioningDouble.holds == {"o2": 1}
    assert payments_db.rows("SELECT order_id FROM payable_orders") == []  # its copy had not come
    watcher.deliver(event)
    assert payments_ready.create_order_payment(ACC, "o2", "BTC", "bitcoin")["id"] == payment["id"]


def test_an_order_orders_says_is_not_awaiting_payment_is_refused(payments_ready):
    OrdersDouble.record(created("o3", datetime.now(UTC)), status="cancelled")
    refused = refusal(payments_ready.create_order_payment, ACC, "o3", "BTC", "bitcoin")
    assert (refused.code, refused.detail) == ("invalid_state", "the order is cancelled, not awaiting payment")
    assert ProvisioningDouble.holds == {}


def test_a_batch_of_status_changes_keeps_each_orders_newest(database_at):
    """Several changes of one order in a batch, in any order: the newest stays (the later of two as new), and
    one older than what is recorded changes nothing; orders never seen are kept for their creation."""
    engine = make_engine(database_at("kernodeck_payments", "heads"))
    now = datetime.now(UTC)
    with Session(engine) as session:
        remember_order(session, created("known", now))
        record_order_statuses(session, [changed("known", "provisioning", now + timedelta(seconds=5))])
        record_order_statuses(
            session,
            [
                changed("b", "paid", now + timedelta(seconds=2)),
                changed("a", "cancelled", now + timedelta(seconds=1)),
                changed("b", "provisioning", now + timedelta(seconds=3)),
                changed("b", "running", now + timedelta(seconds=3)),  # as new as the one before: the later
                changed("b", "paid", now + timedelta(seconds=2)),  # older, again
                changed("known", "paid", now + timedelta(seconds=4)),  # older than what is recorded
            ],
        )
        record_order_statuses(session, [])
        session.commit()
        statuses = {order_id: payable_order(session, order_id).status for order_id in ("a", "b", "known")}
    engine.dispose()
    assert statuses == {"a": "cancelled", "b": "running", "known": "provisioning"}
