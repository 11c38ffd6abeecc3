"""Provisioning's rules on the in-memory unit of work: holds, allocation, delivery outcomes, the term, inventory."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import (
    CapacityChanged,
    OrderCreated,
    ProvisioningFailed,
    ProvisioningStarted,
    RentalEnded,
    RentalEnding,
    RentalExtended,
    RentalExtensionRefused,
    RentalReady,
)
from kernodeck_provisioning import usecases
from kernodeck_provisioning.domain import GpuModel, Isolation, NodeState, RentalStatus
from kernodeck_provisioning.memory import MemoryStore
from services.provisioning.tests.keys import HOST_KEY, USER_KEY

pytestmark = pytest.mark.unit

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
H100 = GpuModel("h100", "cuda", 1)
B200 = GpuModel("b200", "cuda", 2)


@pytest.fixture
def store():
    return MemoryStore()


def run(store, use_case, *args):
    with store.transaction() as uow:
        return use_case(uow, *args)


def add_node(store, gpus=4, model=H100, port=22, host="10.0.0.1", isolation=Isolation.KERNEL):
    """A node as its check found it (one that keeps rentals apart, unless told otherwise)."""
    node = run(store, usecases.add_node, host, port, HOST_KEY, model, model.id, gpus, "", NOW)
    return run(store, usecases.node_checked, node.id, isolation, "", NOW)


def order(store, order_id="o1", model="h100", lots=1, gpus_per_lot=1, preparation="pytorch", key=USER_KEY, days=3):
    event = OrderCreated(
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
    run(store, usecases.order_created, event)
    return event


def hold(store, order_id="o1", gpus=1, model="h100", until=NOW + timedelta(minutes=30), now=NOW):
    return run(store, usecases.hold, order_id, "a1", model, gpus, until, now)


def capacity(store, model="h100"):
    return [e.available_lots for e in store.events if isinstance(e, CapacityChanged) and e.model_id == model][-1]


def of_type(store, kind):
    return [e for e in store.events if isinstance(e, kind)]


def test_a_hold_takes_gpus_and_the_catalog_hears_of_it(store):
    add_node(store, gpus=4)
    assert capacity(store) == 4
    order(store)
    assert hold(store)["new"] is True
    assert capacity(store) == 3
    assert store.rentals["o1"].status == RentalStatus.HELD


def test_a_second_hold_for_the_same_order_extends_it_and_takes_nothing_more(store):
    add_node(store, gpus=2)
    hold(store)
    later = NOW + timedelta(hours=1)
    again = hold(store, until=later)
    assert again["new"] is False
    assert store.rentals["o1"].held_until == later
    assert capacity(store) == 1


def test_no_capacity_refuses_with_out_of_capacity(store):
    add_node(store, gpus=1)
    hold(store, "o1")
    with pytest.raises(ServiceError) as refused:
        hold(store, "o2")
    assert refused.value.code == "out_of_capacity"
    assert "o2" not in store.rentals


def test_a_hold_for_an_order_without_a_key_needs_the_accounts(store):
    """No money is taken for what cannot be delivered: payments asks for the account's key with the hold."""
    add_node(store, gpus=2)
    with pytest.raises(ServiceError) as refused:
        run(store, usecases.hold, "o1", "a1", "h100", 1, NOW + timedelta(minutes=30), NOW, True)
    assert (refused.value.code, refused.value.errors[0]["field"]) == ("ssh_key_required", "ssh_public_key")
    assert "o1" not in store.rentals
    assert hold(store, "o2")["new"] is True  # an order with its own key: the account's is not asked for
    run(store, usecases.set_account_key, "a1", USER_KEY, NOW)
    assert run(store, usecases.hold, "o1", "a1", "h100", 1, NOW + timedelta(minutes=30), NOW, True)["new"] is True


def test_an_unknown_model_is_out_of_capacity(store):
    with pytest.raises(ServiceError) as refused:
        hold(store, model="h100")
    assert refused.value.code == "out_of_capacity"


def test_a_rental_lives_on_one_node_the_fullest_that_fits(store):
    big = add_node(store, gpus=8, host="10.0.0.1")
    small = add_node(store, gpus=2, host="10.0.0.2")
    assert capacity(store) == 8  # the largest order one node can take
    hold(store, "o1", gpus=2)
    assert store.rentals["o1"].node_id == small.id
    hold(store, "o2", gpus=3)
    assert store.rentals["o2"].node_id == big.id
    assert capacity(store) == 5
    with pytest.raises(ServiceError):
        hold(store, "o3", gpus=6)


@pytest.mark.parametrize("gpus", [1, 3])
def test_b200_orders_take_whole_lots_of_two(store, gpus):
    add_node(store, gpus=8, model=B200)
    with pytest.raises(ServiceError) as refused:
        hold(store, gpus=gpus, model="b200")
    assert refused.value.errors[0]["field"] == "gpus"


def test_b200_capacity_is_counted_in_lots_of_two(store):
    add_node(store, gpus=8, model=B200)
    assert capacity(store, "b200") == 4
    hold(store, gpus=4, model="b200")
    assert capacity(store, "b200") == 2


def test_a_lapsed_hold_is_released_at_its_deadline(store):
    add_node(store, gpus=1)
    hold(store, until=NOW + timedelta(minutes=30))
    assert run(store, usecases.sweep_holds, "h100", NOW + timedelta(minutes=29)) == 0
    assert run(store, usecases.sweep_holds, "h100", NOW + timedelta(minutes=30)) == 1
    assert store.rentals["o1"].status == RentalStatus.RELEASED
    assert capacity(store) == 1


def test_a_transfer_on_its_way_keeps_the_hold_past_its_deadline(store):
    add_node(store, gpus=1)
    hold(store)
    run(store, usecases.payment_status, "o1", "p1", "seen")
    assert run(store, usecases.sweep_holds, "h100", NOW + timedelta(hours=2)) == 0
    run(store, usecases.payment_status, "o1", "p1", "expired")
    assert run(store, usecases.sweep_holds, "h100", NOW + timedelta(hours=2)) == 1


def test_an_expired_hold_gives_way_to_another_order(store):
    add_node(store, gpus=1)
    hold(store, "o1", until=NOW + timedelta(minutes=1))
    hold(store, "o2", now=NOW + timedelta(minutes=2), until=NOW + timedelta(minutes=40))
    assert store.rentals["o1"].status == RentalStatus.RELEASED
    assert store.rentals["o2"].status == RentalStatus.HELD


def test_cancelling_the_order_releases_its_hold(store):
    add_node(store, gpus=1)
    order(store)
    hold(store)
    run(store, usecases.order_cancelled, "o1")
    assert store.rentals["o1"].status == RentalStatus.RELEASED
    with pytest.raises(ServiceError) as refused:
        hold(store)
    assert refused.value.code == "invalid_state"


def test_payment_turns_the_hold_into_a_delivery(store):
    add_node(store, gpus=2)
    order(store)
    hold(store)
    assert run(store, usecases.order_paid, "o1", NOW) is True
    rental = store.rentals["o1"]
    assert rental.status == RentalStatus.DELIVERING
    assert [type(e) for e in of_type(store, ProvisioningStarted)] == [ProvisioningStarted]
    assert run(store, usecases.order_paid, "o1", NOW) is False  # a second delivery of the event: nothing more
    assert run(store, usecases.release, "o1", "released_by_payments") is False  # an allocation is never released


def test_a_payment_after_a_lost_hold_takes_free_gpus_again(store):
    add_node(store, gpus=1)
    order(store)
    hold(store, until=NOW + timedelta(minutes=1))
    run(store, usecases.sweep_holds, "h100", NOW + timedelta(minutes=2))
    assert run(store, usecases.order_paid, "o1", NOW + timedelta(minutes=3)) is True
    assert store.rentals["o1"].status == RentalStatus.DELIVERING


def test_a_payment_after_a_lost_hold_with_no_gpu_left_fails_the_order(store):
    add_node(store, gpus=1)
    order(store, "o1")
    order(store, "o2")
    hold(store, "o1", until=NOW + timedelta(minutes=1))
    hold(store, "o2", now=NOW + timedelta(minutes=2))
    assert run(store, usecases.order_paid, "o1", NOW + timedelta(minutes=3)) is False
    assert store.rentals["o1"].status == RentalStatus.FAILED
    (failed,) = of_type(store, ProvisioningFailed)
    assert failed.order_id == "o1" and failed.reason.startswith("capacity_lost")


def test_an_order_paid_before_provisioning_knows_it_is_retried(store):
    with pytest.raises(usecases.OrderNotYetKnown):
        run(store, usecases.order_paid, "o1", NOW)


def paid(store, preparation="pytorch", gpus=1, key=USER_KEY, days=3):
    order(store, preparation=preparation, lots=gpus, key=key, days=days)
    hold(store, gpus=gpus)
    run(store, usecases.order_paid, "o1", NOW)


def test_a_delivery_job_carries_the_orders_key_gpus_and_preparation(store):
    add_node(store, gpus=4)
    paid(store, gpus=2)
    job = run(store, usecases.take_delivery, "o1", NOW, timedelta(minutes=5))
    assert (job.gpu_indices, job.preparation, job.unix_user) == ((0, 1), "pytorch", "kdo1")
    assert job.ssh_public_key == USER_KEY
    assert run(store, usecases.take_delivery, "o1", NOW, timedelta(minutes=5)) is None  # leased
    assert run(store, usecases.take_delivery, "o1", NOW + timedelta(minutes=6), timedelta(minutes=5)) is not None


def test_the_accounts_key_serves_when_the_order_has_none(store):
    add_node(store)
    run(store, usecases.set_account_key, "a1", USER_KEY + " lan@laptop", NOW)
    paid(store, key=None)
    assert run(store, usecases.take_delivery, "o1", NOW, timedelta(minutes=5)).ssh_public_key == USER_KEY


def test_no_key_at_all_fails_the_delivery(store):
    add_node(store)
    paid(store, key=None)
    assert run(store, usecases.take_delivery, "o1", NOW, timedelta(minutes=5)) is None
    assert of_type(store, ProvisioningFailed)[0].reason.startswith("no_ssh_public_key")


def test_a_refusing_node_leaves_service_and_the_rental_moves_to_the_next(store):
    first = add_node(store, gpus=1, host="10.0.0.1")
    second = add_node(store, gpus=1, host="10.0.0.2")
    paid(store)
    job = run(store, usecases.take_delivery, "o1", NOW, timedelta(minutes=5))
    other = second if job.node.id == first.id else first
    assert run(store, usecases.node_refused, job, "readiness: cpu_fallback", NOW) is True
    assert store.nodes[job.node.id].state == NodeState.MAINTENANCE
    retry = run(store, usecases.take_delivery, "o1", NOW, timedelta(minutes=5))
    assert retry.node.id == other.id
    assert run(store, usecases.node_refused, retry, "connect: refused", NOW) is False
    assert store.rentals["o1"].status == RentalStatus.FAILED
    assert of_type(store, ProvisioningFailed)[0].reason.startswith("no_node_passed")
    assert capacity(store) == 0  # both nodes are out of service now


def deliver(store, days=3, at=NOW):
    job = run(store, usecases.take_delivery, "o1", at, timedelta(minutes=5))
    assert run(store, usecases.delivered, job, "sealed", at) is True
    return store.rentals["o1"]


def test_the_term_starts_at_delivery_and_lasts_the_duration(store):
    add_node(store)
    paid(store, days=7)
    delivered_at = NOW + timedelta(minutes=3)
    rental = deliver(store, at=delivered_at)
    assert rental.status == RentalStatus.READY
    assert rental.starts_at == rental.delivered_at == delivered_at
    assert rental.ends_at == delivered_at + timedelta(days=7)
    (ready,) = of_type(store, RentalReady)
    assert (ready.starts_at, ready.ends_at) == (rental.starts_at, rental.ends_at)


def test_end_warnings_go_out_24_hours_and_1_hour_before_the_end_once_each(store):
    add_node(store)
    paid(store, days=3)
    ends_at = deliver(store).ends_at
    assert run(store, usecases.send_warnings, ends_at - timedelta(hours=25)) == 0
    assert run(store, usecases.send_warnings, ends_at - timedelta(hours=24)) == 1
    assert run(store, usecases.send_warnings, ends_at - timedelta(hours=23)) == 0
    assert run(store, usecases.send_warnings, ends_at - timedelta(minutes=59)) == 1
    assert run(store, usecases.send_warnings, ends_at - timedelta(minutes=30)) == 0
    assert [e.hours_left for e in of_type(store, RentalEnding)] == [24, 1]


def test_a_late_start_of_the_sweep_sends_only_the_closest_warning(store):
    add_node(store)
    paid(store)
    ends_at = deliver(store).ends_at
    run(store, usecases.send_warnings, ends_at - timedelta(minutes=30))
    assert [e.hours_left for e in of_type(store, RentalEnding)] == [1]


def test_the_end_frees_the_gpus(store):
    add_node(store, gpus=1)
    paid(store)
    rental = deliver(store)
    assert capacity(store) == 0
    assert run(store, usecases.ended, "o1", rental.ends_at - timedelta(seconds=1)) is False
    assert run(store, usecases.ended, "o1", rental.ends_at) is True
    assert store.rentals["o1"].status == RentalStatus.ENDED
    assert store.rentals["o1"].access_secret == ""
    assert capacity(store) == 1
    assert len(of_type(store, RentalEnded)) == 1


def test_a_paid_extension_moves_the_end_once(store):
    add_node(store)
    paid(store, days=3)
    ends_at = deliver(store).ends_at
    assert run(store, usecases.extension_paid, "o1", "x1", 7, NOW) is True
    assert run(store, usecases.extension_paid, "o1", "x1", 7, NOW) is False
    assert store.rentals["o1"].ends_at == ends_at + timedelta(days=7)
    (extended,) = of_type(store, RentalExtended)
    assert extended.ends_at == ends_at + timedelta(days=7)


def test_an_extension_paid_once_the_rental_ended_is_refused_for_a_refund(store):
    add_node(store)
    paid(store, days=3)
    rental = deliver(store)
    run(store, usecases.ended, "o1", rental.ends_at)
    assert run(store, usecases.extension_paid, "o1", "x1", 7, rental.ends_at) is False
    (refused,) = of_type(store, RentalExtensionRefused)
    assert (refused.extension_id, refused.reason) == ("x1", "ended")
    assert store.rentals["o1"].ends_at == rental.ends_at and of_type(store, RentalExtended) == []


def test_an_extension_paid_before_delivery_counts_from_the_start(store):
    add_node(store)
    paid(store, days=3)
    run(store, usecases.extension_paid, "o1", "x1", 7, NOW)
    assert deliver(store).ends_at == NOW + timedelta(days=10)


def test_a_node_added_twice_is_refused(store):
    add_node(store, host="10.0.0.9", port=2222)
    with pytest.raises(ServiceError) as refused:
        add_node(store, host="10.0.0.9", port=2222)
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
def test_a_malformed_node_is_refused(store, field, change):
    given = {"host": "10.0.0.1", "port": 22, "host_key": HOST_KEY, "model": H100, "gpu_count": 8, **change}
    with pytest.raises(ServiceError) as refused:
        run(
            store,
            usecases.add_node,
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
def test_node_bounds_are_accepted(store, port, gpus):
    assert add_node(store, gpus=gpus, port=port).gpu_count == gpus


def test_a_node_with_a_live_rental_is_drained_never_retired(store):
    node = add_node(store, gpus=2)
    paid(store)
    deliver(store)
    with pytest.raises(ServiceError) as refused:
        run(store, usecases.set_node_state, node.id, "retired", "")
    assert refused.value.code == "invalid_state"
    run(store, usecases.set_node_state, node.id, "draining", "old rack")
    assert capacity(store) == 0  # no new rental on a draining node
    assert store.rentals["o1"].status == RentalStatus.READY  # the live one runs on
    run(store, usecases.ended, "o1", store.rentals["o1"].ends_at)
    assert run(store, usecases.set_node_state, node.id, "retired", "").state == NodeState.RETIRED


def test_a_retired_node_cannot_come_back(store):
    node = add_node(store)
    run(store, usecases.set_node_state, node.id, "retired", "")
    with pytest.raises(ServiceError):
        run(store, usecases.set_node_state, node.id, "available", "")


def test_a_malformed_account_key_is_refused_with_its_field(store):
    with pytest.raises(ServiceError) as refused:
        run(store, usecases.set_account_key, "a1", "ssh-ed25519 AAAA", NOW)
    assert refused.value.errors[0]["field"] == "ssh_public_key"


def test_a_failed_use_case_changes_nothing(store):
    add_node(store, gpus=1)
    before = len(store.events)
    with pytest.raises(ServiceError):
        hold(store, gpus=2)
    assert len(store.events) == before


# --- what a node provides to keep rentals apart ---------------------------------------


@pytest.mark.parametrize("isolation", [Isolation.UNCHECKED, Isolation.NONE])
def test_a_node_that_cannot_keep_rentals_apart_takes_one_rental_at_a_time(store, isolation):
    add_node(store, gpus=4, isolation=isolation)
    assert capacity(store) == 4  # empty: any order that fits
    hold(store, "o1", gpus=1)
    assert capacity(store) == 0  # three GPUs idle, given to nobody else
    with pytest.raises(ServiceError) as refused:
        hold(store, "o2", gpus=1)
    assert refused.value.code == "out_of_capacity"
    run(store, usecases.release, "o1", "order_cancelled")
    assert capacity(store) == 4


def test_a_node_checked_kernel_takes_a_second_rental_and_says_so(store):
    node = add_node(store, gpus=4, isolation=Isolation.UNCHECKED)
    hold(store, "o1", gpus=1)
    assert capacity(store) == 0
    checked = run(store, usecases.node_checked, node.id, Isolation.KERNEL, "kernel 6.1; cgroup v2", NOW)
    assert capacity(store) == 3
    view = run(store, usecases.node_view, checked)
    assert (view["isolation"], view["isolation_note"]) == ("kernel", "kernel 6.1; cgroup v2")
    hold(store, "o2", gpus=3)


def test_a_new_node_is_unchecked_and_checked_by_the_sweep_then_tried_again_a_minute_later(store):
    node = run(store, usecases.add_node, "10.0.0.7", 22, HOST_KEY, H100, "h100", 2, "", NOW)
    assert node.isolation == Isolation.UNCHECKED
    assert run(store, usecases.nodes_to_check, NOW) == [node.id]
    run(store, usecases.node_check_failed, node.id, "connect: refused", NOW)
    assert store.nodes[node.id].isolation_note == "not checked: connect: refused"
    assert run(store, usecases.nodes_to_check, NOW + timedelta(seconds=59)) == []
    assert run(store, usecases.nodes_to_check, NOW + timedelta(seconds=60)) == [node.id]
    run(store, usecases.node_checked, node.id, Isolation.NONE, "no /dev/kfd", NOW)
    assert run(store, usecases.nodes_to_check, NOW + timedelta(hours=1)) == []


def test_a_check_that_cannot_reach_a_checked_node_keeps_what_was_known(store):
    node = add_node(store, isolation=Isolation.KERNEL)
    run(store, usecases.node_check_failed, node.id, "connect: timed out", NOW)
    assert (store.nodes[node.id].isolation, store.nodes[node.id].isolation_note) == (Isolation.KERNEL, "")


def test_a_failed_delivery_not_undone_is_a_leftover_until_reclaimed(store):
    first = add_node(store, gpus=1, host="10.0.0.1")
    add_node(store, gpus=1, host="10.0.0.2")
    paid(store)
    job = run(store, usecases.take_delivery, "o1", NOW, timedelta(minutes=5))
    assert run(store, usecases.node_refused, job, "readiness: x; not undone: y", NOW, True) is True
    assert store.rentals["o1"].leftover_nodes == (job.node.id,)
    assert [r.order_id for r in run(store, lambda uow: uow.rentals_with_leftovers(10))] == ["o1"]
    retry = run(store, usecases.take_delivery, "o1", NOW, timedelta(minutes=5))
    assert run(store, usecases.node_refused, retry, "connect: refused", NOW, False) is False  # the order fails
    assert store.rentals["o1"].leftover_nodes == (job.node.id,)  # still to reclaim, the order failed or not
    run(store, usecases.leftover_reclaimed, "o1", job.node.id)
    assert store.rentals["o1"].leftover_nodes == ()
    assert store.nodes[first.id].state == NodeState.MAINTENANCE


def test_a_process_that_survives_a_reclaim_takes_the_node_out_of_service_once(store):
    node = add_node(store, gpus=2)
    paid(store)
    deliver(store)
    assert run(store, usecases.reclaim_survived, node.id, "processes of kdo1 survive: 77", NOW) is True
    assert store.nodes[node.id].state == NodeState.MAINTENANCE
    assert "survived its reclaim" in store.nodes[node.id].note
    assert capacity(store) == 0
    assert store.rentals["o1"].status == RentalStatus.READY and store.rentals["o1"].claims  # its GPUs stay taken
    assert run(store, usecases.reclaim_survived, node.id, "again", NOW) is False
