"""The order follows provisioning's delivery, and takes the delivery wishes given with it."""

from datetime import UTC, datetime, timedelta

import pytest
from nameko.exceptions import RemoteError
from nameko.standalone.events import event_dispatcher

from kernodeck_contracts import timeline
from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import (
    PaymentSettled,
    ProvisioningFailed,
    ProvisioningStarted,
    RentalEnded,
    RentalEnding,
    RentalReady,
)
from kernodeck_contracts.timeline import Said, TimelineCode
from kernodeck_orders.domain import (
    OrderStatus,
    check_delivery_wishes,
    follow_delivery,
    new_order,
    summary_of,
    transition,
)
from services.orders.tests.test_domain import QUOTE, T0

USER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHhfSSVYW/3sZ0P/EVx3qMQDZOGrPVxY90a/utNHKHCa"  # a public key whose private half was thrown away

S = OrderStatus


def paid_order():
    order = new_order("o1", "a1", summary_of(QUOTE), T0)
    transition(order, S.PAID, T0, Said(TimelineCode.PAID_BALANCE))
    return order


def test_ready_before_started_still_passes_through_provisioning_each_step_saying_what_it_is():
    order = paid_order()
    ready = timeline.ready(T0 + timedelta(days=3))
    entries = follow_delivery(order, S.READY, T0, ready)
    assert [(e.kind, e.said) for e in entries] == [("provisioning", Said(TimelineCode.PREPARING)), ("ready", ready)]
    assert follow_delivery(order, S.PROVISIONING, T0, Said(TimelineCode.PREPARING)) == []
    assert order.status == S.READY


def test_failure_interrupts_the_delivery_and_nothing_follows_it():
    order = paid_order()
    follow_delivery(order, S.PROVISIONING, T0, Said(TimelineCode.PREPARING))
    failed = timeline.failed("no_node_passed: cpu_fallback")
    assert [(e.kind, e.said.code) for e in follow_delivery(order, S.FAILED, T0, failed)] == [
        ("failed", TimelineCode.FAILED_NO_NODE)
    ]
    assert follow_delivery(order, S.READY, T0, timeline.ready(T0)) == []


@pytest.mark.parametrize("note", ["x", "x" * 2000])
def test_a_custom_description_up_to_2000_characters_is_accepted(note):
    assert check_delivery_wishes("custom", None, note) == (None, note)


@pytest.mark.parametrize(("preparation", "note"), [("custom", "x" * 2001), ("custom", "  "), ("pytorch", "x")])
def test_a_description_too_long_empty_or_without_custom_is_refused(preparation, note):
    with pytest.raises(ServiceError) as refused:
        check_delivery_wishes(preparation, None, note)
    assert refused.value.errors[0]["field"] == "preparation_note"


def test_the_key_is_kept_without_its_comment():
    assert check_delivery_wishes("ubuntu", USER_KEY + " lan@laptop", None) == (USER_KEY, None)


@pytest.mark.parametrize(
    "key", ["ssh-ed25519", "ssh-ed25519 AAAA", "ssh-dss AAAAB3NzaC1kc3M=", USER_KEY + "\n" + USER_KEY, "x" * 20000]
)
def test_a_malformed_key_is_refused(key):
    with pytest.raises(ServiceError) as refused:
        check_delivery_wishes("ubuntu", key, None)
    assert refused.value.errors[0]["field"] == "ssh_public_key"


def wait_for(get, predicate, seconds=10.0):
    import eventlet

    with eventlet.Timeout(seconds):
        while not predicate(value := get()):
            eventlet.sleep(0.05)
    return value


def test_provisioning_events_move_the_order_and_give_it_its_dates(orders, config, events):
    order = orders.create_order("a1", "h100", 3, 1, "ubuntu", USER_KEY)
    created = events.wait("order_created")[0]
    assert created["ssh_public_key"] == USER_KEY
    dispatch = event_dispatcher(config)

    def send(event):
        dispatch(event.source, event.type, event.to_message())

    send(
        PaymentSettled(
            payment_id="p1", order_id=order["id"], account_id="a1", amount_usd_cents=18_900, method="balance"
        )
    )
    now = datetime.now(UTC)
    ready = RentalReady(
        order_id=order["id"], account_id="a1", delivered_at=now, starts_at=now, ends_at=now + timedelta(days=3)
    )
    send(ready)  # may come before ProvisioningStarted, and even before orders applied its own `paid`
    send(ProvisioningStarted(order_id=order["id"], account_id="a1"))
    shown = wait_for(lambda: orders.get_order("a1", order["id"]), lambda o: o["status"] == "ready")
    assert shown["rental"]["ends_at"].startswith(ready.ends_at.strftime("%Y-%m-%dT%H:%M"))
    assert [e["kind"] for e in shown["timeline"]][-3:] == ["paid", "provisioning", "ready"]
    send(RentalEnding(order_id=order["id"], account_id="a1", ends_at=ready.ends_at, hours_left=24))
    send(RentalEnded(order_id=order["id"], account_id="a1", ended_at=ready.ends_at))
    shown = wait_for(lambda: orders.get_order("a1", order["id"]), lambda o: o["status"] == "ended")
    ending = next(e for e in shown["timeline"] if e["kind"] == "rental_ending")
    assert (ending["code"], ending["params"]["hours"]) == ("rental_ending", 24)
    assert (
        ending["detail"].startswith("The rental ends in 24 hours (") and "export your results now" in ending["detail"]
    )


def test_a_failed_delivery_fails_the_order_with_its_reason(orders, config):
    order = orders.create_order("a1", "h100", 3, 1, "ubuntu")
    dispatch = event_dispatcher(config)
    settled = PaymentSettled(
        payment_id="p1",
        order_id=order["id"],
        account_id="a1",
        amount_usd_cents=order["summary"]["total_usd_cents"],
        method="balance",
    )
    dispatch(settled.source, settled.type, settled.to_message())
    failed = ProvisioningFailed(order_id=order["id"], account_id="a1", reason="no_node_passed: cpu_fallback")
    dispatch(failed.source, failed.type, failed.to_message())
    shown = wait_for(lambda: orders.get_order("a1", order["id"]), lambda o: o["status"] == "failed")
    assert shown["timeline"][-1]["code"] == "failed_no_node"
    assert shown["timeline"][-1]["detail"].endswith("what you paid is credited to your balance")


def test_a_malformed_key_at_order_creation_is_a_field_error(orders):
    with pytest.raises(RemoteError) as refused:
        orders.create_order("a1", "h100", 3, 1, "ubuntu", "ssh-rsa AAAA")
    assert refused.value.errors[0]["field"] == "ssh_public_key"
