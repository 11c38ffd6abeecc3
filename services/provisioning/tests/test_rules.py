"""Provisioning's rules on the in-memory unit of work: holds, allocation, delivery outcomes, the term, inventory."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import (
    CapacityChanged,
    ExtensionPaid,
    OrderCreated,
    OrderStatusChanged,
    PaymentStatusChanged,
    ProvisioningFailed,
    ProvisioningStarted,
    RentalEnded,
    RentalEnding,
    RentalExtended,
    RentalExtensionRefused,
    RentalReady,
)
from kernodeck_provisioning.domain import GpuModel, Isolation, NodeState, RentalStatus
from kernodeck_provisioning.use_cases import access, allocation, delivery, inventory, term
from kernodeck_provisioning.use_cases import capacity as holds
from services.provisioning.tests.keys import HOST_KEY, USER_KEY
from services.provisioning.tests.memory import memory_units, open_transactions

pytestmark = pytest.mark.unit

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
H100 = GpuModel("h100", "cuda", 1)
B200 = GpuModel("b200", "cuda", 2)


@pytest.fixture
def units():
    return memory_units()


def add_node(units, gpus=4, model=H100, port=22, host="10.0.0.1", isolation=Isolation.KERNEL):
    """A node as its check found it (one that keeps rentals apart, unless told otherwise)."""
    node = inventory.add_node(units, host, port, HOST_KEY, model, model.id, gpus, "", NOW)
    return inventory.node_checked(units, node.id, isolation, "", NOW)


def order(units, order_id="o1", model="h100", lots=1, gpus_per_lot=1, preparation="pytorch", key=USER_KEY, days=3):
    event = order_event(order_id, model, lots, gpus_per_lot, preparation, key, days)
    allocation.order_created(units, event)
    return event


def order_event(order_id="o1", model="h100", lots=1, gpus_per_lot=1, preparation="pytorch", key=USER_KEY, days=3):
    return OrderCreated(
        order_id=order_id,
        account_id="a1",
        model_id=model,
        duration_days=days,
        lots=lots,
        total_gpus=lots * gpus_per_lot,
        preparation=preparation,
        total_usd_cents=1000,
        ssh_public_key=key,
    )


def hold(units, order_id="o1", gpus=1, model="h100", until=NOW + timedelta(minutes=30), now=NOW):
    return holds.hold(units, order_id, "a1", model, gpus, until, now)


def status_changed(units, order_id, status):
    event = OrderStatusChanged(order_id=order_id, account_id="a1", status=status, previous_status="awaiting_payment")
    return allocation.order_status_changed(units, event, unknown_to_orders)


def unknown_to_orders(account_id, order_id):
    raise AssertionError(f"orders asked for {order_id}, which provisioning knows")


def pay(units, order_id):
    return status_changed(units, order_id, "paid")


def cancel(units, order_id):
    status_changed(units, order_id, "cancelled")


def payment(units, order_id, payment_id, status):
    event = PaymentStatusChanged(
        payment_id=payment_id,
        account_id="a1",
        purpose="order",
        order_id=order_id,
        status=status,
        previous_status="awaiting_transfer",
    )
    holds.payment_status_changed(units, event)


def extension(units, order_id, extension_id, extra_days, now):
    event = ExtensionPaid(extension_id=extension_id, order_id=order_id, account_id="a1", extra_days=extra_days)
    return term.extension_paid(units, event, now)


def leftovers(units):
    with units.transaction() as unit:
        return unit.rentals_with_leftovers(10)


def capacity(units, model="h100"):
    return [e.available_lots for e in units.emitted if isinstance(e, CapacityChanged) and e.model_id == model][-1]


def of_type(units, kind):
    return [e for e in units.emitted if isinstance(e, kind)]


def test_a_hold_takes_gpus_and_the_catalog_hears_of_it(units):
    add_node(units, gpus=4)
    assert capacity(units) == 4
    order(units)
    assert hold(units)["new"] is True
    assert capacity(units) == 3
    assert units.state.rentals["o1"].status == RentalStatus.HELD


def test_a_second_hold_for_the_same_order_extends_it_and_takes_nothing_more(units):
    add_node(units, gpus=2)
    hold(units)
    later = NOW + timedelta(hours=1)
    again = hold(units, until=later)
    assert again["new"] is False
    assert units.state.rentals["o1"].held_until == later
    assert capacity(units) == 1


def test_no_capacity_refuses_with_out_of_capacity(units):
    add_node(units, gpus=1)
    hold(units, "o1")
    with pytest.raises(ServiceError) as refused:
        hold(units, "o2")
    assert refused.value.code == "out_of_capacity"
    assert "o2" not in units.state.rentals


def test_a_hold_for_an_order_without_a_key_needs_the_accounts(units):
    """No money is taken for what cannot be delivered: payments asks for the account's key with the hold."""
    add_node(units, gpus=2)
    with pytest.raises(ServiceError) as refused:
        holds.hold(units, "o1", "a1", "h100", 1, NOW + timedelta(minutes=30), NOW, True)
    assert (refused.value.code, refused.value.errors[0]["field"]) == ("ssh_key_required", "ssh_public_key")
    assert "o1" not in units.state.rentals
    assert hold(units, "o2")["new"] is True  # an order with its own key: the account's is not asked for
    access.set_account_key(units, "a1", USER_KEY, NOW)
    assert holds.hold(units, "o1", "a1", "h100", 1, NOW + timedelta(minutes=30), NOW, True)["new"] is True


def test_an_unknown_model_is_out_of_capacity(units):
    with pytest.raises(ServiceError) as refused:
        hold(units, model="h100")
    assert refused.value.code == "out_of_capacity"


def test_a_rental_lives_on_one_node_the_fullest_that_fits(units):
    big = add_node(units, gpus=8, host="10.0.0.1")
    small = add_node(units, gpus=2, host="10.0.0.2")
    assert capacity(units) == 8  # the largest order one node can take
    hold(units, "o1", gpus=2)
    assert units.state.rentals["o1"].node_id == small.id
    hold(units, "o2", gpus=3)
    assert units.state.rentals["o2"].node_id == big.id
    assert capacity(units) == 5
    with pytest.raises(ServiceError):
        hold(units, "o3", gpus=6)


@pytest.mark.parametrize("gpus", [1, 3])
def test_b200_orders_take_whole_lots_of_two(units, gpus):
    add_node(units, gpus=8, model=B200)
    with pytest.raises(ServiceError) as refused:
        hold(units, gpus=gpus, model="b200")
    assert refused.value.errors[0]["field"] == "gpus"


def test_b200_capacity_is_counted_in_lots_of_two(units):
    add_node(units, gpus=8, model=B200)
    assert capacity(units, "b200") == 4
    hold(units, gpus=4, model="b200")
    assert capacity(units, "b200") == 2


def test_a_lapsed_hold_is_released_at_its_deadline(units):
    add_node(units, gpus=1)
    hold(units, until=NOW + timedelta(minutes=30))
    assert holds.sweep_holds(units, "h100", NOW + timedelta(minutes=29)) == 0
    assert holds.sweep_holds(units, "h100", NOW + timedelta(minutes=30)) == 1
    assert units.state.rentals["o1"].status == RentalStatus.RELEASED
    assert capacity(units) == 1


def test_a_transfer_on_its_way_keeps_the_hold_past_its_deadline(units):
    add_node(units, gpus=1)
    hold(units)
    payment(units, "o1", "p1", "seen")
    assert holds.sweep_holds(units, "h100", NOW + timedelta(hours=2)) == 0
    payment(units, "o1", "p1", "expired")
    assert holds.sweep_holds(units, "h100", NOW + timedelta(hours=2)) == 1


def test_an_expired_hold_gives_way_to_another_order(units):
    add_node(units, gpus=1)
    hold(units, "o1", until=NOW + timedelta(minutes=1))
    hold(units, "o2", now=NOW + timedelta(minutes=2), until=NOW + timedelta(minutes=40))
    assert units.state.rentals["o1"].status == RentalStatus.RELEASED
    assert units.state.rentals["o2"].status == RentalStatus.HELD


def test_cancelling_the_order_releases_its_hold(units):
    add_node(units, gpus=1)
    order(units)
    hold(units)
    cancel(units, "o1")
    assert units.state.rentals["o1"].status == RentalStatus.RELEASED
    with pytest.raises(ServiceError) as refused:
        hold(units)
    assert refused.value.code == "invalid_state"


def test_payment_turns_the_hold_into_a_delivery(units):
    add_node(units, gpus=2)
    order(units)
    hold(units)
    assert pay(units, "o1") is True
    rental = units.state.rentals["o1"]
    assert rental.status == RentalStatus.DELIVERING
    assert [type(e) for e in of_type(units, ProvisioningStarted)] == [ProvisioningStarted]
    assert pay(units, "o1") is False  # a second delivery of the event: nothing more
    assert holds.release(units, "o1", "released_by_payments") is False  # an allocation is never released


def test_a_payment_after_a_lost_hold_takes_free_gpus_again(units):
    add_node(units, gpus=1)
    order(units)
    hold(units, until=NOW + timedelta(minutes=1))
    holds.sweep_holds(units, "h100", NOW + timedelta(minutes=2))
    assert pay(units, "o1") is True
    assert units.state.rentals["o1"].status == RentalStatus.DELIVERING


def test_a_payment_after_a_lost_hold_with_no_gpu_left_fails_the_order(units):
    add_node(units, gpus=1)
    order(units, "o1")
    order(units, "o2")
    hold(units, "o1", until=NOW + timedelta(minutes=1))
    hold(units, "o2", now=NOW + timedelta(minutes=2))
    assert pay(units, "o1") is False
    assert units.state.rentals["o1"].status == RentalStatus.FAILED
    (failed,) = of_type(units, ProvisioningFailed)
    assert failed.order_id == "o1" and failed.reason.startswith("capacity_lost")


def test_an_order_paid_before_provisioning_knows_it_is_asked_of_orders_before_the_transaction(units):
    add_node(units, gpus=1)
    created = order_event("o1")  # orders knows it; its OrderCreated has not reached provisioning
    transactions = open_transactions(units)
    asked = []

    def orders_answer(account_id, order_id):
        asked.append((account_id, order_id, units.state.orders.get(order_id), transactions()))
        return created

    event = OrderStatusChanged(order_id="o1", account_id="a1", status="paid", previous_status="awaiting_payment")
    assert allocation.order_status_changed(units, event, orders_answer) is True
    assert asked == [("a1", "o1", None, 0)]
    assert units.state.rentals["o1"].status == RentalStatus.DELIVERING
    assert units.state.orders["o1"].preparation == "pytorch"


def paid(units, preparation="pytorch", gpus=1, key=USER_KEY, days=3):
    order(units, preparation=preparation, lots=gpus, key=key, days=days)
    hold(units, gpus=gpus)
    pay(units, "o1")


def test_a_delivery_job_carries_the_orders_key_gpus_and_preparation(units):
    add_node(units, gpus=4)
    paid(units, gpus=2)
    job = delivery.take_delivery(units, "o1", NOW, timedelta(minutes=5))
    assert (job.gpu_indices, job.preparation, job.unix_user) == ((0, 1), "pytorch", "kdo1")
    assert job.ssh_public_key == USER_KEY
    assert delivery.take_delivery(units, "o1", NOW, timedelta(minutes=5)) is None  # leased
    assert delivery.take_delivery(units, "o1", NOW + timedelta(minutes=6), timedelta(minutes=5)) is not None


def test_the_accounts_key_serves_when_the_order_has_none(units):
    add_node(units)
    access.set_account_key(units, "a1", USER_KEY + " lan@laptop", NOW)
    paid(units, key=None)
    assert delivery.take_delivery(units, "o1", NOW, timedelta(minutes=5)).ssh_public_key == USER_KEY


def test_no_key_at_all_fails_the_delivery(units):
    add_node(units)
    paid(units, key=None)
    assert delivery.take_delivery(units, "o1", NOW, timedelta(minutes=5)) is None
    assert of_type(units, ProvisioningFailed)[0].reason.startswith("no_ssh_public_key")


def test_a_refusing_node_leaves_service_and_the_rental_moves_to_the_next(units):
    first = add_node(units, gpus=1, host="10.0.0.1")
    second = add_node(units, gpus=1, host="10.0.0.2")
    paid(units)
    job = delivery.take_delivery(units, "o1", NOW, timedelta(minutes=5))
    other = second if job.node.id == first.id else first
    assert delivery.node_refused(units, job, "readiness: cpu_fallback", NOW) is True
    assert units.state.nodes[job.node.id].state == NodeState.MAINTENANCE
    retry = delivery.take_delivery(units, "o1", NOW, timedelta(minutes=5))
    assert retry.node.id == other.id
    assert delivery.node_refused(units, retry, "connect: refused", NOW) is False
    assert units.state.rentals["o1"].status == RentalStatus.FAILED
    assert of_type(units, ProvisioningFailed)[0].reason.startswith("no_node_passed")
    assert capacity(units) == 0  # both nodes are out of service now


def deliver(units, days=3, at=NOW):
    job = delivery.take_delivery(units, "o1", at, timedelta(minutes=5))
    assert delivery.delivered(units, job, "sealed", at) is True
    return units.state.rentals["o1"]


def test_the_term_starts_at_delivery_and_lasts_the_duration(units):
    add_node(units)
    paid(units, days=7)
    delivered_at = NOW + timedelta(minutes=3)
    rental = deliver(units, at=delivered_at)
    assert rental.status == RentalStatus.READY
    assert rental.starts_at == rental.delivered_at == delivered_at
    assert rental.ends_at == delivered_at + timedelta(days=7)
    (ready,) = of_type(units, RentalReady)
    assert (ready.starts_at, ready.ends_at) == (rental.starts_at, rental.ends_at)


def test_end_warnings_go_out_24_hours_and_1_hour_before_the_end_once_each(units):
    add_node(units)
    paid(units, days=3)
    ends_at = deliver(units).ends_at
    assert term.send_warnings(units, ends_at - timedelta(hours=25)) == 0
    assert term.send_warnings(units, ends_at - timedelta(hours=24)) == 1
    assert term.send_warnings(units, ends_at - timedelta(hours=23)) == 0
    assert term.send_warnings(units, ends_at - timedelta(minutes=59)) == 1
    assert term.send_warnings(units, ends_at - timedelta(minutes=30)) == 0
    assert [e.hours_left for e in of_type(units, RentalEnding)] == [24, 1]


def test_a_late_start_of_the_sweep_sends_only_the_closest_warning(units):
    add_node(units)
    paid(units)
    ends_at = deliver(units).ends_at
    term.send_warnings(units, ends_at - timedelta(minutes=30))
    assert [e.hours_left for e in of_type(units, RentalEnding)] == [1]


def test_the_end_frees_the_gpus(units):
    add_node(units, gpus=1)
    paid(units)
    rental = deliver(units)
    assert capacity(units) == 0
    assert term.ended(units, "o1", rental.ends_at - timedelta(seconds=1)) is False
    assert term.ended(units, "o1", rental.ends_at) is True
    assert units.state.rentals["o1"].status == RentalStatus.ENDED
    assert units.state.rentals["o1"].access_secret == ""
    assert capacity(units) == 1
    assert len(of_type(units, RentalEnded)) == 1


def test_a_paid_extension_moves_the_end_once(units):
    add_node(units)
    paid(units, days=3)
    ends_at = deliver(units).ends_at
    assert extension(units, "o1", "x1", 7, NOW) is True
    assert extension(units, "o1", "x1", 7, NOW) is False
    assert units.state.rentals["o1"].ends_at == ends_at + timedelta(days=7)
    (extended,) = of_type(units, RentalExtended)
    assert extended.ends_at == ends_at + timedelta(days=7)


def test_an_extension_paid_once_the_rental_ended_is_refused_for_a_refund(units):
    add_node(units)
    paid(units, days=3)
    rental = deliver(units)
    term.ended(units, "o1", rental.ends_at)
    assert extension(units, "o1", "x1", 7, rental.ends_at) is False
    (refused,) = of_type(units, RentalExtensionRefused)
    assert (refused.extension_id, refused.reason) == ("x1", "ended")
    assert units.state.rentals["o1"].ends_at == rental.ends_at and of_type(units, RentalExtended) == []


def test_an_extension_paid_before_delivery_counts_from_the_start(units):
    add_node(units)
    paid(units, days=3)
    extension(units, "o1", "x1", 7, NOW)
    assert deliver(units).ends_at == NOW + timedelta(days=10)


def test_a_node_added_twice_is_refused(units):
    add_node(units, host="10.0.0.9", port=2222)
    with pytest.raises(ServiceError) as refused:
        add_node(units, host="10.0.0.9", port=2222)
    assert refused.value.code == "already_exists"


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("host_key", {"host_key": "ssh-ed25519 not-base64!"}),
        ("port", {"port": 0}),
        ("port", {"port": 65536}),
        ("gpu_count", {"gpu_count": 0}),
        ("gpu_count", {"gpu_count": 65}),
        ("host", {"host": "bad host"}),
        ("model", {"model": None}),
    ],
)
def test_a_malformed_node_is_refused(units, field, change):
    given = {"host": "10.0.0.1", "port": 22, "host_key": HOST_KEY, "model": H100, "gpu_count": 8, **change}
    with pytest.raises(ServiceError) as refused:
        inventory.add_node(
            units,
            given["host"],
            given["port"],
            given["host_key"],
            given["model"],
            "h100",
            given["gpu_count"],
            "",
            NOW,
        )
    assert field in {e["field"] for e in refused.value.errors}


@pytest.mark.parametrize(("port", "gpus"), [(1, 1), (65535, 64)])
def test_node_bounds_are_accepted(units, port, gpus):
    assert add_node(units, gpus=gpus, port=port).gpu_count == gpus


def test_a_node_with_a_live_rental_is_drained_never_retired(units):
    node = add_node(units, gpus=2)
    paid(units)
    deliver(units)
    with pytest.raises(ServiceError) as refused:
        inventory.set_node_state(units, node.id, "retired", "")
    assert refused.value.code == "invalid_state"
    inventory.set_node_state(units, node.id, "draining", "old rack")
    assert capacity(units) == 0  # no new rental on a draining node
    assert units.state.rentals["o1"].status == RentalStatus.READY  # the live one runs on
    term.ended(units, "o1", units.state.rentals["o1"].ends_at)
    assert inventory.set_node_state(units, node.id, "retired", "").state == NodeState.RETIRED


def test_a_retired_node_cannot_come_back(units):
    node = add_node(units)
    inventory.set_node_state(units, node.id, "retired", "")
    with pytest.raises(ServiceError):
        inventory.set_node_state(units, node.id, "available", "")


def test_a_malformed_account_key_is_refused_with_its_field(units):
    with pytest.raises(ServiceError) as refused:
        access.set_account_key(units, "a1", "ssh-ed25519 AAAA", NOW)
    assert refused.value.errors[0]["field"] == "ssh_public_key"


def test_a_failed_use_case_changes_nothing(units):
    add_node(units, gpus=1)
    before = len(units.emitted)
    with pytest.raises(ServiceError):
        hold(units, gpus=2)
    assert len(units.emitted) == before


# --- what a node provides to keep rentals apart ---------------------------------------


@pytest.mark.parametrize("isolation", [Isolation.UNCHECKED, Isolation.NONE])
def test_a_node_that_cannot_keep_rentals_apart_takes_one_rental_at_a_time(units, isolation):
    add_node(units, gpus=4, isolation=isolation)
    assert capacity(units) == 4  # empty: any order that fits
    hold(units, "o1", gpus=1)
    assert capacity(units) == 0  # three GPUs idle, given to nobody else
    with pytest.raises(ServiceError) as refused:
        hold(units, "o2", gpus=1)
    assert refused.value.code == "out_of_capacity"
    holds.release(units, "o1", "order_cancelled")
    assert capacity(units) == 4


def test_a_node_checked_kernel_takes_a_second_rental_and_says_so(units):
    node = add_node(units, gpus=4, isolation=Isolation.UNCHECKED)
    hold(units, "o1", gpus=1)
    assert capacity(units) == 0
    checked = inventory.node_checked(units, node.id, Isolation.KERNEL, "kernel 6.1; cgroup v2", NOW)
    assert capacity(units) == 3
    view = inventory.node_view(units, checked.id)
    assert (view["isolation"], view["isolation_note"]) == ("kernel", "kernel 6.1; cgroup v2")
    hold(units, "o2", gpus=3)


def test_a_new_node_is_unchecked_and_checked_by_the_sweep_then_tried_again_a_minute_later(units):
    node = inventory.add_node(units, "10.0.0.7", 22, HOST_KEY, H100, "h100", 2, "", NOW)
    assert node.isolation == Isolation.UNCHECKED
    assert inventory.nodes_to_check(units, NOW) == [node.id]
    inventory.node_check_failed(units, node.id, "connect: refused", NOW)
    assert units.state.nodes[node.id].isolation_note == "not checked: connect: refused"
    assert inventory.nodes_to_check(units, NOW + timedelta(seconds=59)) == []
    assert inventory.nodes_to_check(units, NOW + timedelta(seconds=60)) == [node.id]
    inventory.node_checked(units, node.id, Isolation.NONE, "no /dev/kfd", NOW)
    assert inventory.nodes_to_check(units, NOW + timedelta(hours=1)) == []


def test_a_check_that_cannot_reach_a_checked_node_keeps_what_was_known(units):
    node = add_node(units, isolation=Isolation.KERNEL)
    inventory.node_check_failed(units, node.id, "connect: timed out", NOW)
    assert (units.state.nodes[node.id].isolation, units.state.nodes[node.id].isolation_note) == (Isolation.KERNEL, "")


def test_a_failed_delivery_not_undone_is_a_leftover_until_reclaimed(units):
    first = add_node(units, gpus=1, host="10.0.0.1")
    add_node(units, gpus=1, host="10.0.0.2")
    paid(units)
    job = delivery.take_delivery(units, "o1", NOW, timedelta(minutes=5))
    assert delivery.node_refused(units, job, "readiness: x; not undone: y", NOW, True) is True
    assert units.state.rentals["o1"].leftover_nodes == (job.node.id,)
    assert [r.order_id for r in leftovers(units)] == ["o1"]
    retry = delivery.take_delivery(units, "o1", NOW, timedelta(minutes=5))
    assert delivery.node_refused(units, retry, "connect: refused", NOW, False) is False  # the order fails
    assert units.state.rentals["o1"].leftover_nodes == (job.node.id,)  # still to reclaim, the order failed or not
    delivery.leftover_reclaimed(units, "o1", job.node.id)
    assert units.state.rentals["o1"].leftover_nodes == ()
    assert units.state.nodes[first.id].state == NodeState.MAINTENANCE


def test_a_process_that_survives_a_reclaim_takes_the_node_out_of_service_once(units):
    node = add_node(units, gpus=2)
    paid(units)
    deliver(units)
    assert delivery.reclaim_survived(units, node.id, "processes of kdo1 survive: 77", NOW) is True
    assert units.state.nodes[node.id].state == NodeState.MAINTENANCE
    assert "survived its reclaim" in units.state.nodes[node.id].note
    assert capacity(units) == 0
    assert (
        units.state.rentals["o1"].status == RentalStatus.READY and units.state.rentals["o1"].claims
    )  # its GPUs stay taken
    assert delivery.reclaim_survived(units, node.id, "again", NOW) is False
