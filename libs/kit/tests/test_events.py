"""The kit's event consumer against the real broker: a failing handler gets the event again, after a pause."""

import itertools
import time

import eventlet
from nameko.standalone.events import event_dispatcher
from prometheus_client import REGISTRY

from kernodeck_contracts.events import OrderCreated
from kernodeck_kit.transport.events import RETRY_PAUSE_KEY, batch_consumer, consumer

PAUSE_S = 0.3
attempts: list[float] = []
handled: list[dict] = []


class Flaky:
    """Fails the first two deliveries of each event, then handles it."""

    name = "flaky"

    @consumer(OrderCreated)
    def on_created(self, payload):
        attempts.append(time.monotonic())
        if len(attempts) <= 2:
            raise RuntimeError("a dependency is down")
        handled.append(payload)


def sample(name: str) -> float:
    return REGISTRY.get_sample_value(name, {"service": "flaky", "consumer": "on_created"}) or 0.0


def test_a_failed_event_comes_back_after_the_pause_until_it_is_handled(container_factory, rabbit_config):
    failures, redelivered = (
        sample("kernodeck_event_handler_failures_total"),
        sample("kernodeck_events_redelivered_total"),
    )
    attempts.clear()
    handled.clear()
    config = {**rabbit_config, RETRY_PAUSE_KEY: PAUSE_S}
    container_factory(Flaky, config).start()
    event_dispatcher(config)("orders", "order_created", {"order_id": "o-1"})
    with eventlet.Timeout(10):
        while not handled:
            eventlet.sleep(0.02)
    assert handled == [{"order_id": "o-1"}]
    assert len(attempts) == 3
    assert all(later - earlier >= PAUSE_S for earlier, later in itertools.pairwise(attempts))
    assert sample("kernodeck_event_handler_failures_total") - failures == 2
    assert sample("kernodeck_events_redelivered_total") - redelivered == 2  # the two failed deliveries came back


batches: list[list[str]] = []
gate = eventlet.event.Event()


class Batching:
    """The first call waits at the gate, so that the events published meanwhile come together; a batch holding
    an order id starting with "bad-" fails until that id has come three times."""

    name = "batching"

    @batch_consumer(OrderCreated)
    def on_created(self, payloads):
        ids = [payload["order_id"] for payload in payloads]
        batches.append(ids)
        if len(batches) == 1:
            gate.wait()
        if any(i.startswith("bad-") and sum(i in batch for batch in batches) < 3 for i in ids):
            raise RuntimeError("one of them cannot be handled yet")


def test_events_that_come_while_the_handler_is_busy_go_together_and_a_failed_batch_goes_again_one_by_one(
    container_factory, rabbit_config
):
    batches.clear()
    config = {**rabbit_config, RETRY_PAUSE_KEY: 0.02}
    container_factory(Batching, config).start()
    dispatch = event_dispatcher(config)
    dispatch("orders", "order_created", {"order_id": "first"})
    with eventlet.Timeout(10):
        while not batches:
            eventlet.sleep(0.02)
    for order_id in ("a", "bad-b", "c"):
        dispatch("orders", "order_created", {"order_id": order_id})
    eventlet.sleep(0.3)  # all three wait for the busy handler
    gate.send()
    with eventlet.Timeout(10):
        while len(batches) < 6:
            eventlet.sleep(0.02)
    eventlet.sleep(0.2)  # nothing more comes
    # Alone, bad-b fails once more and comes back at the end of the queue, as with `consumer`.
    assert batches == [["first"], ["a", "bad-b", "c"], ["a"], ["bad-b"], ["c"], ["bad-b"]]
