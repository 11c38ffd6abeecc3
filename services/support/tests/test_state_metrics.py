"""Requests by kind and status, the oldest open one's wait, extensions by status: read at each scrape."""

from prometheus_client import REGISTRY

from services.support.tests.conftest import an_order


def sample(name: str, **labels) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def test_the_queue_is_read_from_the_tables_at_each_scrape(support, neighbours):
    assert sample("kernodeck_support_requests", kind="incident", status="open") == 0
    assert sample("kernodeck_support_oldest_open_age_seconds") == 0
    neighbours["o1"] = an_order("o1", "alice")
    first = support.open_request("alice", "o1", "incident", "it fails")
    support.open_request("alice", "o1", "question", "paid twice?")
    support.answer_request("op1", first["id"], "fixed")
    assert sample("kernodeck_support_requests", kind="incident", status="answered") == 1
    assert sample("kernodeck_support_requests", kind="question", status="open") == 1
    assert sample("kernodeck_support_oldest_open_age_seconds") > 0
    assert sample("kernodeck_support_extensions", status="confirmed") == 0
    assert sample("kernodeck_state_metrics_up", service="support") == 1
