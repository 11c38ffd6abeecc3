"""Provisioning's use cases over a unit of work: holds, allocation, delivery outcomes, the term, the inventory.

Every change to the GPUs of a model happens with that model locked
(`get_model(..., lock=True)`), so two workers never hand out the same GPU;
the SQL store's unique (node, GPU) claim is the second guard.
"""

import logging
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from uuid import uuid4

from kernodeck_contracts.errors import ErrorCode, EventTooEarly, ServiceError
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
from kernodeck_contracts.ssh_keys import InvalidSshKey, canonical_ssh_key
from kernodeck_provisioning.domain import (
    BACKENDS,
    PREPARATIONS,
    WARNING_HOURS,
    Access,
    GpuModel,
    Isolation,
    Node,
    NodeLoad,
    NodeState,
    OrderCopy,
    Rental,
    RentalStatus,
    available_lots,
    check_gpus,
    extend_term,
    move_node,
    move_rental,
    place,
    ssh_key_required,
    start_term,
    unix_user_for,
    warnings_due,
)
from kernodeck_provisioning.ports import UnitOfWork

log = logging.getLogger(__name__)

BATCH = 200
MAX_GPUS_PER_NODE = 64
# A payment in these statuses has a transfer on its way: its order's hold waits for it past the deadline.
PAYMENT_IN_FLIGHT = frozenset({"seen", "confirming", "settled", "overpaid"})
NO_KEY = "no_ssh_public_key"
CAPACITY_LOST = "capacity_lost"
NO_NODE_PASSED = "no_node_passed"
CHECK_RETRY = timedelta(minutes=1)  # an unchecked node that could not be reached is tried again after this


@dataclass(frozen=True)
class DeliveryJob:
    """Everything a host agent needs to prepare one rental on one node."""

    order_id: str
    node: Node
    gpu_indices: tuple[int, ...]
    unix_user: str
    ssh_public_key: str
    preparation: str


# --- capacity ---------------------------------------------------------------


def loads_of(uow: UnitOfWork, model_id: str) -> list[NodeLoad]:
    nodes = uow.nodes_of_model(model_id)
    claimed = uow.claimed_on([n.id for n in nodes])
    return [NodeLoad(n, claimed[n.id]) for n in nodes]


def announce_capacity(uow: UnitOfWork, model_id: str, force: bool = False, loads: list[NodeLoad] | None = None) -> int:
    """Tell the catalog the model's free lots when they changed (or always, with `force`); `loads`, when the
    caller has them current, spare reading them again."""
    model = uow.get_model(model_id)
    lots = available_lots(loads if loads is not None else loads_of(uow, model_id), model.gpus_per_lot)
    if force or lots != model.published_lots:
        uow.emit(CapacityChanged(model_id=model_id, available_lots=lots))
        uow.save_model(replace(model, published_lots=lots))
    return lots


def sync_models(uow: UnitOfWork, catalog_models: list[dict]) -> None:
    """Copy the catalog's models (backend, GPUs per lot); each gets its capacity announced, 0 without a node."""
    for entry in catalog_models:
        model = uow.get_model(entry["id"], lock=True)
        fresh = GpuModel(entry["id"], entry["backend"], entry["gpus_per_lot"])
        if model is None or (model.backend, model.gpus_per_lot) != (fresh.backend, fresh.gpus_per_lot):
            uow.save_model(replace(fresh, published_lots=model.published_lots if model else None))
    for model in uow.list_models():
        announce_capacity(uow, model.id, force=True)


# --- holds --------------------------------------------------------------------


def hold(
    uow: UnitOfWork,
    order_id: str,
    account_id: str,
    model_id: str,
    gpus: int,
    until: datetime,
    now: datetime,
    account_key_needed: bool = False,
) -> dict:
    """Set the order's GPUs aside until `until`; idempotent per order (a later deadline extends it). With
    `account_key_needed` (the order has no SSH key of its own), refused while the account has none."""
    if account_key_needed and uow.account_key(account_id) is None:
        raise ssh_key_required()
    model = uow.get_model(model_id, lock=True)
    if model is None:
        raise ServiceError(ErrorCode.OUT_OF_CAPACITY, f"no {model_id} GPU is in service right now")
    check_gpus(gpus, model.gpus_per_lot)
    if until <= now:
        raise ServiceError.field("until", "a hold must end in the future")
    rental = uow.get_rental(order_id)
    if rental is not None and rental.account_id != account_id:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
    if rental is not None and rental.status == RentalStatus.HELD:
        rental.held_until = max(rental.held_until, until)
        uow.save_rental(rental)
        return hold_view(rental, new=False)
    if rental is not None and rental.status != RentalStatus.RELEASED:
        raise ServiceError(ErrorCode.INVALID_STATE, f"the order's GPUs are {rental.status} already")
    order = uow.get_order(order_id)
    if order is not None and order.cancelled:
        raise ServiceError(ErrorCode.INVALID_STATE, "the order is cancelled")
    release_lapsed(uow, model_id, now)
    loads = loads_of(uow, model_id)
    placement = place(loads, gpus)
    if placement is None:
        raise ServiceError(
            ErrorCode.OUT_OF_CAPACITY, f"not enough {model_id} GPUs are free on one node for this order right now"
        )
    if rental is None:
        rental = Rental(order_id, account_id, model_id, gpus, RentalStatus.HELD)
    else:
        move_rental(rental, RentalStatus.HELD)
        rental.gpus = gpus
    rental.node_id, rental.gpu_indices, rental.held_until = placement.node.id, placement.gpu_indices, until
    rental.payments_in_flight = frozenset()
    uow.save_rental(rental)
    next(load for load in loads if load.node.id == placement.node.id).claimed.update(placement.gpu_indices)
    announce_capacity(uow, model_id, loads=loads)
    return hold_view(rental, new=True)


def hold_view(rental: Rental, new: bool) -> dict:
    return {"order_id": rental.order_id, "held_until": rental.held_until.isoformat(), "new": new}


def release(uow: UnitOfWork, order_id: str, reason: str) -> bool:
    """Give back a hold (never an allocation); False when there is none."""
    rental = _locked_rental(uow, order_id)
    if rental is None or rental.status != RentalStatus.HELD:
        return False
    move_rental(rental, RentalStatus.RELEASED, reason)
    uow.save_rental(rental)
    announce_capacity(uow, rental.model_id)
    return True


def release_lapsed(uow: UnitOfWork, model_id: str | None, now: datetime) -> int:
    """Holds past their deadline with no transfer on its way; the model(s) must be locked by the caller."""
    lapsed = uow.lapsed_holds(model_id, now, BATCH)
    for rental in lapsed:
        move_rental(rental, RentalStatus.RELEASED, "hold_lapsed")
        uow.save_rental(rental)
    return len(lapsed)


def sweep_holds(uow: UnitOfWork, model_id: str, now: datetime) -> int:
    uow.get_model(model_id, lock=True)
    released = release_lapsed(uow, model_id, now)
    if released:
        announce_capacity(uow, model_id)
    return released


def payment_status(uow: UnitOfWork, order_id: str, payment_id: str, status: str) -> None:
    """A transfer on its way keeps the hold past its deadline; once it is settled or gone, the deadline counts."""
    rental = _locked_rental(uow, order_id)
    if rental is None or rental.status != RentalStatus.HELD:
        return
    if status in PAYMENT_IN_FLIGHT:
        rental.payments_in_flight = rental.payments_in_flight | {payment_id}
    else:
        rental.payments_in_flight = rental.payments_in_flight - {payment_id}
    uow.save_rental(rental)


# --- orders -----------------------------------------------------------------------


def order_created(uow: UnitOfWork, event: OrderCreated) -> None:
    key = event.ssh_public_key
    if key:
        try:
            key = canonical_ssh_key(key)
        except InvalidSshKey:
            log.warning(
                "order created with an unusable SSH key; the account's key will be used",
                extra={"order_id": event.order_id},
            )
            key = None
    uow.save_order(
        OrderCopy(
            order_id=event.order_id,
            account_id=event.account_id,
            model_id=event.model_id,
            duration_days=event.duration_days,
            lots=event.lots,
            total_gpus=event.total_gpus,
            preparation=event.preparation,
            ssh_public_key=key,
            preparation_note=event.preparation_note,
        )
    )


def order_cancelled(uow: UnitOfWork, order_id: str) -> None:
    order = uow.get_order(order_id)
    if order is not None:
        uow.save_order(replace(order, cancelled=True))
    release(uow, order_id, "order_cancelled")


class OrderNotYetKnown(EventTooEarly):
    """OrderCreated has not arrived yet: the event that needs it is retried."""


def order_paid(uow: UnitOfWork, order_id: str, now: datetime) -> bool:
    """The hold becomes the customer's allocation; True when a delivery is to start.

    A hold lost before the payment settled (a late transfer) is taken afresh
    when GPUs are free; otherwise the order fails and is refunded.
    """
    order = uow.get_order(order_id)
    if order is None:
        raise OrderNotYetKnown(order_id)
    uow.get_model(order.model_id, lock=True)
    rental = uow.get_rental(order_id)
    if rental is not None and rental.status not in (RentalStatus.HELD, RentalStatus.RELEASED):
        return False  # a redelivered or older event: already under way
    if rental is None or rental.status == RentalStatus.RELEASED:
        placement = place(loads_of(uow, order.model_id), order.total_gpus)
        rental = rental or Rental(order_id, order.account_id, order.model_id, order.total_gpus, RentalStatus.RELEASED)
        if placement is None:
            _fail(uow, rental, CAPACITY_LOST, "the GPUs held for this order were released before the payment arrived")
            return False
        rental.node_id, rental.gpu_indices = placement.node.id, placement.gpu_indices
    move_rental(rental, RentalStatus.DELIVERING)
    rental.unix_user = unix_user_for(order_id)
    rental.delivery_lease_until = None
    rental.payments_in_flight = frozenset()
    uow.save_rental(rental)
    uow.emit(ProvisioningStarted(order_id=order_id, account_id=rental.account_id))
    announce_capacity(uow, rental.model_id)
    return True


def _fail(uow: UnitOfWork, rental: Rental, reason: str, detail: str) -> None:
    move_rental(rental, RentalStatus.FAILED, reason)
    uow.save_rental(rental)
    uow.emit(ProvisioningFailed(order_id=rental.order_id, account_id=rental.account_id, reason=f"{reason}: {detail}"))
    log.error("provisioning failed", extra={"order_id": rental.order_id, "reason": reason})


# --- delivery -------------------------------------------------------------------


def take_delivery(uow: UnitOfWork, order_id: str, now: datetime, lease: timedelta) -> DeliveryJob | None:
    """Claim the rental's delivery for `lease` (another worker takes it over after that); None when not due."""
    rental = _locked_rental(uow, order_id)
    if rental is None or rental.status != RentalStatus.DELIVERING:
        return None
    if rental.delivery_lease_until is not None and rental.delivery_lease_until > now:
        return None
    order = uow.get_order(order_id)
    key = order.ssh_public_key or uow.account_key(rental.account_id)
    if not key:
        _fail(uow, rental, NO_KEY, "no SSH public key was given with the order or set on the account")
        announce_capacity(uow, rental.model_id)
        return None
    rental.delivery_lease_until = now + lease
    uow.save_rental(rental)
    return DeliveryJob(
        order_id=order_id,
        node=uow.get_node(rental.node_id),
        gpu_indices=rental.gpu_indices,
        unix_user=rental.unix_user,
        ssh_public_key=key,
        preparation=order.preparation,
    )


def delivered(uow: UnitOfWork, job: DeliveryJob, access_secret: str, now: datetime) -> bool:
    """The node passed its check and the access works: the term starts now."""
    rental = _locked_rental(uow, job.order_id)
    if rental is None or rental.status != RentalStatus.DELIVERING or rental.node_id != job.node.id:
        return False
    order = uow.get_order(job.order_id)
    start_term(rental, order.duration_days, now)
    rental.access_secret = access_secret
    rental.delivery_lease_until = None
    move_rental(rental, RentalStatus.READY)
    uow.save_rental(rental)
    uow.emit(
        RentalReady(
            order_id=rental.order_id,
            account_id=rental.account_id,
            delivered_at=rental.delivered_at,
            starts_at=rental.starts_at,
            ends_at=rental.ends_at,
        )
    )
    return True


def node_refused(uow: UnitOfWork, job: DeliveryJob, reason: str, now: datetime, leftover: bool = False) -> bool:
    """The node could not be delivered: it leaves service, and the rental moves to the next node that fits.
    `leftover`: what the delivery made there could not be undone yet; the sweep reclaims it later.

    True when another node was found (deliver again), False when the order failed.
    """
    rental = _locked_rental(uow, job.order_id)
    if rental is not None and leftover and job.node.id not in rental.leftover_nodes:
        rental.leftover_nodes = (*rental.leftover_nodes, job.node.id)
        uow.save_rental(rental)
    if rental is None or rental.status != RentalStatus.DELIVERING or rental.node_id != job.node.id:
        return False
    node = uow.get_node(job.node.id)
    if node.state == NodeState.AVAILABLE:
        node.state, node.note = NodeState.MAINTENANCE, f"failed a delivery at {now.isoformat()}: {reason}"[:500]
        uow.save_node(node)
    rental.tried_nodes = (*rental.tried_nodes, node.id)
    placement = place(loads_of(uow, rental.model_id), rental.gpus, exclude=rental.tried_nodes)
    if placement is None:
        # What each node answered stays in its note and the logs: the customer sees no host detail.
        _fail(uow, rental, NO_NODE_PASSED, "no node passed its preparation and readiness check")
    else:
        rental.node_id, rental.gpu_indices = placement.node.id, placement.gpu_indices
        rental.delivery_lease_until = None
        uow.save_rental(rental)
    announce_capacity(uow, rental.model_id)
    return placement is not None


def leftover_reclaimed(uow: UnitOfWork, order_id: str, node_id: str) -> None:
    rental = _locked_rental(uow, order_id)
    if rental is not None and node_id in rental.leftover_nodes:
        rental.leftover_nodes = tuple(n for n in rental.leftover_nodes if n != node_id)
        uow.save_rental(rental)


def reclaim_survived(uow: UnitOfWork, node_id: str, reason: str, now: datetime) -> bool:
    """A process of a rental outlived its reclaim: the node leaves service, and what the rental held stays held
    (its GPUs, its UID) until a reclaim finds nothing left. True when the node left service now."""
    node = _locked_node(uow, node_id)
    if node is None or node.state not in (NodeState.AVAILABLE, NodeState.DRAINING):
        return False
    node.state = NodeState.MAINTENANCE
    node.note = f"a rental's process survived its reclaim at {now.isoformat()}: {reason}"[:500]
    uow.save_node(node)
    announce_capacity(uow, node.model_id)
    return True


# --- the term ---------------------------------------------------------------------


def send_warnings(uow: UnitOfWork, now: datetime) -> int:
    sent = 0
    for candidate in uow.ready_ending_before(now + timedelta(hours=max(WARNING_HOURS)), BATCH):
        rental = _locked_rental(uow, candidate.order_id)
        due = warnings_due(rental, now)
        if not due:
            continue
        rental.warned_hours = (*rental.warned_hours, *due)
        uow.save_rental(rental)
        uow.emit(
            RentalEnding(
                order_id=rental.order_id, account_id=rental.account_id, ends_at=rental.ends_at, hours_left=min(due)
            )
        )
        sent += 1
    return sent


def ended(uow: UnitOfWork, order_id: str, now: datetime) -> bool:
    """The node was reclaimed and wiped: the GPUs are free again."""
    rental = _locked_rental(uow, order_id)
    if rental is None or rental.status != RentalStatus.READY or rental.ends_at > now:
        return False
    move_rental(rental, RentalStatus.ENDED, "term_over")
    rental.access_secret = ""
    uow.save_rental(rental)
    uow.emit(RentalEnded(order_id=order_id, account_id=rental.account_id, ended_at=now))
    announce_capacity(uow, rental.model_id)
    return True


def extension_paid(uow: UnitOfWork, order_id: str, extension_id: str, extra_days: int, now: datetime) -> bool:
    rental = _locked_rental(uow, order_id)
    if rental is None:
        raise OrderNotYetKnown(order_id)
    try:
        if not extend_term(rental, extension_id, extra_days):
            return False
    except ServiceError:  # over before the paid extension reached it: support refunds it
        uow.emit(
            RentalExtensionRefused(
                order_id=order_id, account_id=rental.account_id, extension_id=extension_id, reason=rental.status
            )
        )
        return False
    if rental.ends_at is not None:
        rental.warned_hours = tuple(h for h in rental.warned_hours if rental.ends_at - now <= timedelta(hours=h))
    uow.save_rental(rental)
    if rental.ends_at is not None:
        uow.emit(
            RentalExtended(
                order_id=order_id, account_id=rental.account_id, extension_id=extension_id, ends_at=rental.ends_at
            )
        )
    return True


# --- SSH keys -----------------------------------------------------------------------


def set_account_key(uow: UnitOfWork, account_id: str, key: str, now: datetime) -> str:
    try:
        canonical = canonical_ssh_key(key)
    except InvalidSshKey as error:
        raise ServiceError.field("ssh_public_key", str(error)) from None
    uow.set_account_key(account_id, canonical, now)
    return canonical


# --- inventory ------------------------------------------------------------------------


def add_node(
    uow: UnitOfWork,
    host: str,
    port: int,
    host_key: str,
    model: GpuModel | None,
    model_id: str,
    gpu_count: int,
    note: str,
    now: datetime,
) -> Node:
    errors = []
    if not isinstance(host, str) or not host or len(host) > 253 or any(c.isspace() or c in "/@[]" for c in host):
        errors.append({"field": "host", "message": "a host name or IP address"})
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        errors.append({"field": "port", "message": "a TCP port from 1 to 65535"})
    try:
        host_key = canonical_ssh_key(host_key)
    except InvalidSshKey as error:
        errors.append({"field": "host_key", "message": f"the node's SSH host key: {error}"})
    if model is None:
        errors.append({"field": "model", "message": f"unknown model {model_id!r}"})
    if isinstance(gpu_count, bool) or not isinstance(gpu_count, int) or not 1 <= gpu_count <= MAX_GPUS_PER_NODE:
        errors.append({"field": "gpu_count", "message": f"a node has 1 to {MAX_GPUS_PER_NODE} GPUs"})
    if errors:
        raise ServiceError(ErrorCode.VALIDATION_ERROR, "the node is not valid", errors)
    if model.backend not in BACKENDS:
        raise ServiceError.field("model", f"backend {model.backend!r} is not one we deliver")
    existing = uow.get_model(model.id, lock=True)
    if existing is None:
        uow.save_model(model)
    if uow.node_at(host, port) is not None:
        raise ServiceError(ErrorCode.ALREADY_EXISTS, f"a node at {host}:{port} is registered already")
    node = Node(
        uuid4().hex[:12], host, port, host_key, model.id, model.backend, gpu_count, NodeState.AVAILABLE, now, note
    )
    uow.save_node(node)
    announce_capacity(uow, model.id)
    return node


def nodes_to_check(uow: UnitOfWork, now: datetime) -> list[str]:
    return [node.id for node in uow.nodes_to_check(now - CHECK_RETRY, BATCH)]


def node_checked(uow: UnitOfWork, node_id: str, isolation: Isolation, note: str, now: datetime) -> Node | None:
    """What the node's check found; a node that cannot isolate takes one rental at a time from now on."""
    node = _locked_node(uow, node_id)
    if node is None:
        return None
    node.isolation, node.isolation_note, node.isolation_checked_at = isolation, note[:500], now
    uow.save_node(node)
    announce_capacity(uow, node.model_id)
    return node


def node_check_failed(uow: UnitOfWork, node_id: str, reason: str, now: datetime) -> Node | None:
    """The check could not reach the node: what was known of it stays; an unchecked one is tried again later."""
    node = _locked_node(uow, node_id)
    if node is None:
        return None
    node.isolation_checked_at = now
    if node.isolation == Isolation.UNCHECKED:
        node.isolation_note = f"not checked: {reason}"[:500]
    uow.save_node(node)
    return node


def set_node_state(uow: UnitOfWork, node_id: str, state: str, note: str) -> Node:
    try:
        target = NodeState(state)
    except ValueError:
        raise ServiceError.field("state", f"one of {', '.join(NodeState)}") from None
    node = uow.get_node(node_id)
    if node is None:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such node")
    uow.get_model(node.model_id, lock=True)
    move_node(node, target, uow.live_rentals_on(node.id))
    node.note = note[:500]
    uow.save_node(node)
    announce_capacity(uow, node.model_id)
    return node


def node_view(uow: UnitOfWork, node: Node) -> dict:
    claimed = uow.claimed_on([node.id])[node.id]
    return {
        "id": node.id,
        "host": node.host,
        "port": node.port,
        "host_key": node.host_key,
        "model": node.model_id,
        "backend": node.backend,
        "gpu_count": node.gpu_count,
        "gpus_in_use": len(claimed),
        "live_rentals": uow.live_rentals_on(node.id),
        "state": node.state.value,
        "note": node.note,
        "isolation": node.isolation.value,
        "isolation_note": node.isolation_note,
        "created_at": node.created_at.isoformat(),
    }


def check_preparation(preparation: str) -> None:
    if preparation not in PREPARATIONS:
        raise ServiceError.field("preparation", f"no delivery script for {preparation!r}")


def access_view(access: Access, preparation: str) -> dict:
    notebook = preparation == "notebook"
    return {
        "ssh_host": access.ssh_host,
        "ssh_port": access.ssh_port,
        "ssh_user": access.ssh_user,
        "jupyter_url": access.jupyter_url if notebook else None,
        "jupyter_token": access.jupyter_token if notebook else None,
        "jupyter_tunnel": access.jupyter_tunnel if notebook else None,
    }


def _locked_node(uow: UnitOfWork, node_id: str) -> Node | None:
    """The node, read again after its model is locked."""
    node = uow.get_node(node_id)
    if node is None:
        return None
    uow.get_model(node.model_id, lock=True)
    return uow.get_node(node_id)


def _locked_rental(uow: UnitOfWork, order_id: str) -> Rental | None:
    """The rental, read again after its model is locked, so that no other worker changes it meanwhile."""
    rental = uow.get_rental(order_id)
    if rental is None:
        return None
    uow.get_model(rental.model_id, lock=True)
    return uow.get_rental(order_id)
