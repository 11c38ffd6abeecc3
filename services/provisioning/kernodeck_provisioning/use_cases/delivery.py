"""Delivery on a node: the rental's job taken under a lease, the node's answer recorded (ready, or the next node
after a refusal), and what a rental left on a node reclaimed."""

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from kernodeck_contracts.events import RentalReady
from kernodeck_kit.units import Units
from kernodeck_provisioning import metrics
from kernodeck_provisioning.domain import (
    Access,
    Delivered,
    DeliveryJob,
    Node,
    NodeCheck,
    NodeRefused,
    NodeState,
    ProcessesSurvive,
    RentalStatus,
    move_rental,
    place,
    start_term,
)
from kernodeck_provisioning.use_cases.capacity import announce_capacity, loads_of
from kernodeck_provisioning.use_cases.unit import ProvisioningUnit, fail, locked_node, locked_rental

log = logging.getLogger(__name__)

NO_KEY = "no_ssh_public_key"
NO_NODE_PASSED = "no_node_passed"
DELIVERY_STEPS = ("connect", "user", "preparation", "readiness", "access")

Clock = Callable[[], datetime]


class Hosts(Protocol):
    """The GPU nodes, over SSH in the service (hosts.SshHosts); each raises NodeRefused when the node cannot."""

    def check(self, node: Node) -> NodeCheck: ...

    def deliver(self, job: DeliveryJob) -> Delivered: ...

    def reclaim(self, node: Node, unix_user: str) -> None:
        """ProcessesSurvive when a process of the rental lives on."""


def deliver(
    units: Units[ProvisioningUnit],
    hosts: Hosts,
    seal: Callable[[Access], str],
    order_id: str,
    clock: Clock,
    lease: timedelta,
) -> None:
    """Deliver on the rental's node, moving to the next node after each refusal, until ready or failed; `seal`
    encrypts the access for storage."""
    while True:
        job = take_delivery(units, order_id, clock(), lease)
        if job is None:
            return
        try:
            done = hosts.deliver(job)
        except NodeRefused as refused:
            metrics.NODE_REFUSALS.labels(refused.step).inc()
            if isinstance(refused, ProcessesSurvive):
                metrics.RECLAIM_SURVIVORS.inc()
            log.error(
                "node refused a delivery; it is out of service until an operator looks at it",
                extra={
                    "order_id": order_id,
                    "node_id": job.node.id,
                    "step": refused.step,
                    "reason": refused.reason,
                    "leftover": refused.leftover,
                },
            )
            if not node_refused(units, job, str(refused), clock(), refused.leftover):
                metrics.DELIVERIES.labels("failed").inc()
                return
            continue
        for step in DELIVERY_STEPS:
            metrics.DELIVERY_STEP_SECONDS.labels(step).observe(getattr(done.times, step))
        delivered(units, job, seal(done.access), clock())
        metrics.DELIVERIES.labels("ready").inc()
        return


def take_delivery(units: Units[ProvisioningUnit], order_id: str, now: datetime, lease: timedelta) -> DeliveryJob | None:
    """Claim the rental's delivery for `lease` (another worker takes it over after that); None when not due."""
    with units.transaction() as unit:
        rental = locked_rental(unit, order_id)
        if rental is None or rental.status != RentalStatus.DELIVERING:
            return None
        if rental.delivery_lease_until is not None and rental.delivery_lease_until > now:
            return None
        order = unit.get_order(order_id)
        key = order.ssh_public_key or unit.account_key(rental.account_id)
        if not key:
            fail(unit, rental, NO_KEY, "no SSH public key was given with the order or set on the account")
            announce_capacity(unit, rental.model_id)
            return None
        rental.delivery_lease_until = now + lease
        unit.save_rental(rental)
        return DeliveryJob(
            order_id=order_id,
            node=unit.get_node(rental.node_id),
            gpu_indices=rental.gpu_indices,
            unix_user=rental.unix_user,
            ssh_public_key=key,
            preparation=order.preparation,
        )


def delivered(units: Units[ProvisioningUnit], job: DeliveryJob, access_secret: str, now: datetime) -> bool:
    """The node passed its check and the access works: the term starts now."""
    with units.transaction() as unit:
        rental = locked_rental(unit, job.order_id)
        if rental is None or rental.status != RentalStatus.DELIVERING or rental.node_id != job.node.id:
            return False
        order = unit.get_order(job.order_id)
        start_term(rental, order.duration_days, now)
        rental.access_secret = access_secret
        rental.delivery_lease_until = None
        move_rental(rental, RentalStatus.READY)
        unit.save_rental(rental)
        unit.emit(
            RentalReady(
                order_id=rental.order_id,
                account_id=rental.account_id,
                delivered_at=rental.delivered_at,
                starts_at=rental.starts_at,
                ends_at=rental.ends_at,
            )
        )
        return True


def node_refused(
    units: Units[ProvisioningUnit], job: DeliveryJob, reason: str, now: datetime, leftover: bool = False
) -> bool:
    """The node could not be delivered: it leaves service, and the rental moves to the next node that fits.
    `leftover`: what the delivery made there could not be undone yet; the sweep reclaims it later.

    True when another node was found (deliver again), False when the order failed.
    """
    with units.transaction() as unit:
        rental = locked_rental(unit, job.order_id)
        if rental is not None and leftover and job.node.id not in rental.leftover_nodes:
            rental.leftover_nodes = (*rental.leftover_nodes, job.node.id)
            unit.save_rental(rental)
        if rental is None or rental.status != RentalStatus.DELIVERING or rental.node_id != job.node.id:
            return False
        node = unit.get_node(job.node.id)
        if node.state == NodeState.AVAILABLE:
            node.state, node.note = NodeState.MAINTENANCE, f"failed a delivery at {now.isoformat()}: {reason}"[:500]
            unit.save_node(node)
        rental.tried_nodes = (*rental.tried_nodes, node.id)
        placement = place(loads_of(unit, rental.model_id), rental.gpus, exclude=rental.tried_nodes)
        if placement is None:
            # What each node answered stays in its note and the logs: the customer sees no host detail.
            fail(unit, rental, NO_NODE_PASSED, "no node passed its preparation and readiness check")
        else:
            rental.node_id, rental.gpu_indices = placement.node.id, placement.gpu_indices
            rental.delivery_lease_until = None
            unit.save_rental(rental)
        announce_capacity(unit, rental.model_id)
        return placement is not None


def reclaim(
    units: Units[ProvisioningUnit], hosts: Hosts, node: Node, unix_user: str, order_id: str, clock: Clock
) -> bool:
    """Reclaim the rental's user on the node; True when nothing of it is left there. A process that survives
    sends the node out of service."""
    try:
        hosts.reclaim(node, unix_user)
        return True
    except ProcessesSurvive as survived:
        metrics.RECLAIM_SURVIVORS.inc()
        log.error(
            "a process of a rental survived its reclaim; its node is out of service, its GPUs stay taken",
            extra={"order_id": order_id, "node_id": node.id, "reason": survived.reason},
        )
        reclaim_survived(units, node.id, survived.reason, clock())
    except NodeRefused as refused:
        metrics.RECLAIM_FAILURES.inc()
        log.error(
            "a rental could not be reclaimed yet",
            extra={"order_id": order_id, "node_id": node.id, "reason": str(refused)},
        )
    return False


def reclaim_leftover(units: Units[ProvisioningUnit], hosts: Hosts, order_id: str, node_id: str, clock: Clock) -> None:
    """What a failed delivery left on a node, reclaimed now."""
    with units.transaction() as unit:
        rental, node = unit.get_rental(order_id), unit.get_node(node_id)
    if rental is None or node is None or node_id not in rental.leftover_nodes:
        return
    if reclaim(units, hosts, node, rental.unix_user, order_id, clock):
        leftover_reclaimed(units, order_id, node_id)


def leftover_reclaimed(units: Units[ProvisioningUnit], order_id: str, node_id: str) -> None:
    with units.transaction() as unit:
        rental = locked_rental(unit, order_id)
        if rental is not None and node_id in rental.leftover_nodes:
            rental.leftover_nodes = tuple(n for n in rental.leftover_nodes if n != node_id)
            unit.save_rental(rental)


def reclaim_survived(units: Units[ProvisioningUnit], node_id: str, reason: str, now: datetime) -> bool:
    """A process of a rental outlived its reclaim: the node leaves service, and what the rental held stays held
    (its GPUs, its UID) until a reclaim finds nothing left. True when the node left service now."""
    with units.transaction() as unit:
        node = locked_node(unit, node_id)
        if node is None or node.state not in (NodeState.AVAILABLE, NodeState.DRAINING):
            return False
        node.state = NodeState.MAINTENANCE
        node.note = f"a rental's process survived its reclaim at {now.isoformat()}: {reason}"[:500]
        unit.save_node(node)
        announce_capacity(unit, node.model_id)
        return True
