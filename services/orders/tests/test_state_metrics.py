"""Orders by status, read from the table at each scrape."""

from prometheus_client import REGISTRY

ALICE = "acc-alice"


def orders_in(status: str) -> float | None:
    return REGISTRY.get_sample_value("kernodeck_orders", {"status": status})


def test_orders_by_status_are_counted_at_each_scrape(orders):
    assert (orders_in("awaiting_payment"), orders_in("cancelled"), orders_in("ready")) == (0, 0, 0)
    kept = orders.create_order(ALICE, "h100", 3, 1, "ubuntu")
    cancelled = orders.create_order(ALICE, "h100", 3, 1, "ubuntu")
    orders.cancel_order(ALICE, cancelled["id"])

    assert (orders_in("awaiting_payment"), orders_in("cancelled"), orders_in("ready")) == (1, 1, 0)
    assert kept["status"] == "awaiting_payment"
    assert REGISTRY.get_sample_value("kernodeck_state_metrics_up", {"service": "orders"}) == 1
