"""An order's payment instructions asked the instant the order is recorded, before payments has heard of it: the
order comes from orders itself, as its `order_created` would have brought it, and nothing waits for that event.

Payments' queue of `order_created` is unbound for the tests that need payments not to have heard of the order
(the event then stays in orders' outbox); the others ask as a customer would, at once and many together."""

from datetime import datetime

import eventlet
import pytest
from kombu import Connection

from kernodeck_kit.doubles import ProvisioningDouble
from kernodeck_kit.transport.calls import RemoteServiceError
from kernodeck_orders.config import OrdersSettings
from services.payments.tests.helpers import rpc_proxies

ACC = "acc1"
CUSTOMERS = 20
ORDER_CREATED_QUEUE = "evt-orders-order_created--payments.on_order_created"


@pytest.fixture
def payments_deaf_to_new_orders(running, configs):
    """Payments hears of no order created from here on: its queue of `order_created` unbound (it is bound again
    after the test, and orders' outbox then delivers what it kept)."""
    with Connection(configs["payments"]["AMQP_URI"]) as connection:
        channel = connection.channel()
        channel.queue_unbind(ORDER_CREATED_QUEUE, "orders.events", "order_created")
        yield
        channel.queue_bind(ORDER_CREATED_QUEUE, "orders.events", "order_created")


def heard_of(payments_db, order_id: str) -> bool:
    return bool(payments_db.rows("SELECT order_id FROM payable_orders WHERE order_id = :id", id=order_id))


def test_instructions_asked_before_payments_heard_of_the_order_are_the_orders(
    payments_ready, orders, payments_deaf_to_new_orders, payments_db
):
    order = orders.create_order(ACC, "h100", 3, 2, "ubuntu")
    payment = payments_ready.create_order_payment(ACC, order["id"], "LTC", "litecoin")
    assert not heard_of(payments_db, order["id"])  # the order came from orders, not from its event
    assert (payment["order_id"], payment["amount_usd_cents"]) == (order["id"], order["summary"]["total_usd_cents"])
    assert (payment["asset"], payment["network"], payment["status"]) == ("LTC", "litecoin", "awaiting_transfer")
    lapses = datetime.fromisoformat(order["created_at"]) + OrdersSettings().unpaid_ttl
    assert datetime.fromisoformat(payment["expires_at"]) <= lapses  # never after the order's own deadline
    assert ProvisioningDouble.holds[order["id"]] == order["summary"]["total_gpus"]  # the order's GPUs held
    # Asked again, the same instructions.
    assert payments_ready.create_order_payment(ACC, order["id"], "LTC", "litecoin")["id"] == payment["id"]


def test_an_order_payments_has_not_heard_of_is_refused_as_orders_sees_it(
    payments_ready, orders, payments_deaf_to_new_orders
):
    """Another customer's order is not found; a cancelled one (payments heard of its status, not its creation)
    is not payable."""
    order = orders.create_order(ACC, "h100", 3, 1, "ubuntu")
    with pytest.raises(RemoteServiceError) as another:
        payments_ready.create_order_payment("acc2", order["id"], "LTC", "litecoin")
    assert another.value.code == "not_found"  # another customer's order: as if it did not exist
    orders.cancel_order(ACC, order["id"])
    with pytest.raises(RemoteServiceError) as cancelled:
        payments_ready.create_order_payment(ACC, order["id"], "LTC", "litecoin")
    assert cancelled.value.code == "invalid_state"
    assert payments_ready.list_order_payments(ACC, order["id"]) == [] and order["id"] not in ProvisioningDouble.holds


def test_orders_asked_to_be_paid_the_instant_they_are_recorded_each_get_their_own_instructions(payments_ready, configs):
    """As customers do: the order recorded, its instructions asked at once, 20 customers together."""
    with (
        rpc_proxies(configs["orders"], "orders", CUSTOMERS) as orders,
        rpc_proxies(configs["payments"], "payments", CUSTOMERS) as payments,
    ):

        def customer(n: int) -> tuple[dict, dict]:
            to_orders, to_payments = orders.get(), payments.get()
            order = to_orders.create_order(f"acc-{n}", "h100", 3, 1 + n % 3, "ubuntu")
            return order, to_payments.create_order_payment(f"acc-{n}", order["id"], "LTC", "litecoin")

        answers = list(eventlet.GreenPool(CUSTOMERS).imap(customer, range(CUSTOMERS)))
    for order, payment in answers:
        assert (payment["order_id"], payment["account_id"]) == (order["id"], order["account_id"])
        assert payment["amount_usd_cents"] == order["summary"]["total_usd_cents"]
        assert ProvisioningDouble.holds[order["id"]] == order["summary"]["total_gpus"]
        lapses = datetime.fromisoformat(order["created_at"]) + OrdersSettings().unpaid_ttl
        assert datetime.fromisoformat(payment["expires_at"]) <= lapses
    assert len({payment["address"] for _, payment in answers}) == CUSTOMERS
