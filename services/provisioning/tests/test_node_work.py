"""Provisioning's work on nodes, on the in-memory unit and hosts that answer as told: a delivery moving past a
refusing node, what a failed one left reclaimed, the sweep's ends and finds, a node's check. None of it runs
inside a transaction."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_contracts.events import OrderCreated, OrderStatusChanged, ProvisioningFailed, RentalEnded, RentalReady
from kernodeck_provisioning.crypto import SecretBox, new_key
from kernodeck_provisioning.domain import (
    Access,
    Delivered,
    DeliveryJob,
    GpuModel,
    Isolation,
    Node,
    NodeCheck,
    NodeRefused,
    NodeState,
    ProcessesSurvive,
    RentalStatus,
    StepTimes,
)
from kernodeck_provisioning.use_cases import allocation, capacity, delivery, inventory, upkeep
from services.provisioning.tests.keys import HOST_KEY, USER_KEY
from services.provisioning.tests.memory import memory_units, open_transactions

pytestmark = pytest.mark.unit

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LEASE = timedelta(minutes=15)
H100 = GpuModel("h100", "cuda", 1)


class Clock:
    def __init__(self):
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


class Hosts:
    """Nodes that answer as the test tells them (`refusals`, `checks`, `survivors`: by node host), recording what
    they were asked and that no transaction was open meanwhile."""

    def __init__(self, transactions):
        self.transactions = transactions
        self.refusals: dict[str, NodeRefused] = {}
        self.checks: dict[str, NodeCheck | NodeRefused] = {}
        self.survivors: set[str] = set()
        self.asked: list[tuple[str, str]] = []

    def _ask(self, what: str, node: Node) -> None:
        assert self.transactions() == 0, f"{what} on {node.host} inside a transaction"
        self.asked.append((what, node.host))

    def deliver(self, job: DeliveryJob) -> Delivered:
        self._ask("deliver", job.node)
        if job.node.host in self.refusals:
            raise self.refusals[job.node.host]
        return Delivered(Access(job.node.host, job.node.port, job.unix_user), StepTimes(0.1, 0.2, 0.3, 0.4, 0.5))

    def check(self, node: Node) -> NodeCheck:
        self._ask("check", node)
        found = self.checks[node.host]
        if isinstance(found, NodeRefused):
            raise found
        return found

    def reclaim(self, node: Node, unix_user: str) -> None:
        self._ask(f"reclaim {unix_user}", node)
        if node.host in self.survivors:
            raise ProcessesSurvive("reclaim", f"processes of {unix_user} survive: 77", leftover=True)


@pytest.fixture
def units():
    return memory_units()


@pytest.fixture
def hosts(units):
    return Hosts(open_transactions(units))


@pytest.fixture
def clock():
    return Clock()


def add_node(units, host, gpus=1, isolation=Isolation.KERNEL):
    node = inventory.add_node(units, host, 22, HOST_KEY, H100, "h100", gpus, "", NOW)
    return inventory.node_checked(units, node.id, isolation, "", NOW)


def paid(units, order_id="o1", days=3):
    created = OrderCreated(
        order_id=order_id,
        account_id="a1",
        model_id="h100",
        duration_days=days,
        lots=1,
        total_gpus=1,
        preparation="pytorch",
        total_usd_cents=1000,
        ssh_public_key=USER_KEY,
    )
    allocation.order_created(units, created)
    capacity.hold(units, order_id, "a1", "h100", 1, NOW + timedelta(minutes=30), NOW)
    event = OrderStatusChanged(order_id=order_id, account_id="a1", status="paid", previous_status="awaiting_payment")
    assert allocation.order_status_changed(units, event, lambda *_: pytest.fail("the order is known"))


def deliver(units, hosts, clock, order_id="o1"):
    box = SecretBox(new_key())
    delivery.deliver(units, hosts, box.seal, order_id, clock, LEASE)
    return box


def test_a_delivery_moves_past_a_refusing_node_and_the_term_starts_on_the_next(units, hosts, clock):
    add_node(units, "10.0.0.1")
    add_node(units, "10.0.0.2")
    paid(units)
    first = units.state.nodes[units.state.rentals["o1"].node_id].host
    second = "10.0.0.2" if first == "10.0.0.1" else "10.0.0.1"
    hosts.refusals[first] = NodeRefused("readiness", "cpu_fallback")
    box = deliver(units, hosts, clock)
    assert hosts.asked == [("deliver", first), ("deliver", second)]
    rental = units.state.rentals["o1"]
    assert rental.status == RentalStatus.READY and rental.starts_at == NOW
    assert box.open(rental.access_secret) == Access(second, 22, rental.unix_user)
    nodes = {node.host: node for node in units.state.nodes.values()}
    assert nodes[first].state == NodeState.MAINTENANCE and "cpu_fallback" in nodes[first].note
    assert [event.order_id for event in units.of(RentalReady)] == ["o1"]


def test_a_delivery_no_node_passes_fails_and_what_it_left_is_reclaimed_by_the_sweep(units, hosts, clock):
    node = add_node(units, "10.0.0.1")
    paid(units)
    hosts.refusals["10.0.0.1"] = NodeRefused("preparation", "exit 1; not undone: exit 2", leftover=True)
    deliver(units, hosts, clock)
    rental = units.state.rentals["o1"]
    assert rental.status == RentalStatus.FAILED and rental.leftover_nodes == (node.id,)
    assert units.of(ProvisioningFailed)[0].reason.startswith("no_node_passed")

    work = upkeep.sweep(units, hosts, clock)
    assert (work.deliveries, work.checks, work.leftovers) == ([], [], [("o1", node.id)])
    delivery.reclaim_leftover(units, hosts, "o1", node.id, clock)
    assert hosts.asked[-1] == ("reclaim kdo1", "10.0.0.1")
    assert units.state.rentals["o1"].leftover_nodes == ()


def test_a_delivery_left_by_a_stopped_worker_is_found_once_its_lease_lapsed(units, hosts, clock):
    add_node(units, "10.0.0.1")
    paid(units)
    assert delivery.take_delivery(units, "o1", NOW, LEASE) is not None  # then the worker stopped
    assert upkeep.sweep(units, hosts, clock).deliveries == []
    clock.now = NOW + LEASE
    assert upkeep.sweep(units, hosts, clock).deliveries == ["o1"]


def test_the_sweep_reclaims_an_ended_term_before_it_ends_the_rental(units, hosts, clock):
    add_node(units, "10.0.0.1")
    paid(units, days=3)
    deliver(units, hosts, clock)
    clock.now = NOW + timedelta(days=3)
    upkeep.sweep(units, hosts, clock)
    assert hosts.asked[-1] == ("reclaim kdo1", "10.0.0.1")
    assert units.state.rentals["o1"].status == RentalStatus.ENDED
    assert [event.order_id for event in units.of(RentalEnded)] == ["o1"]


def test_a_process_surviving_the_end_keeps_the_rental_and_takes_the_node_out(units, hosts, clock):
    node = add_node(units, "10.0.0.1")
    paid(units, days=3)
    deliver(units, hosts, clock)
    hosts.survivors.add("10.0.0.1")
    clock.now = NOW + timedelta(days=3)
    upkeep.sweep(units, hosts, clock)
    assert units.state.rentals["o1"].status == RentalStatus.READY  # its GPUs and UID stay taken
    assert units.state.nodes[node.id].state == NodeState.MAINTENANCE
    assert units.of(RentalEnded) == []


def test_a_node_check_records_what_it_found_or_that_it_could_not_reach_the_node(units, hosts, clock):
    node = inventory.add_node(units, "10.0.0.1", 22, HOST_KEY, H100, "h100", 2, "", NOW)
    assert upkeep.sweep(units, hosts, clock).checks == [node.id]
    hosts.checks["10.0.0.1"] = NodeRefused("connect", "refused")
    inventory.check_node(units, hosts, node.id, clock)
    assert units.state.nodes[node.id].isolation_note == "not checked: connect: refused"
    hosts.checks["10.0.0.1"] = NodeCheck("kernel", "kernel 6.1; cgroup v2")
    inventory.check_node(units, hosts, node.id, clock)
    assert units.state.nodes[node.id].isolation == Isolation.KERNEL
    assert inventory.node_view(units, node.id)["isolation_note"] == "kernel 6.1; cgroup v2"
