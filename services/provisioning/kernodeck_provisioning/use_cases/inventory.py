"""The GPU nodes operators add and move between states, and the check of what each provides to keep rentals
apart."""

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from uuid import uuid4

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.ssh_keys import InvalidSshKey, canonical_ssh_key
from kernodeck_kit.units import Units
from kernodeck_provisioning import metrics
from kernodeck_provisioning.domain import BACKENDS, GpuModel, Isolation, Node, NodeRefused, NodeState, move_node
from kernodeck_provisioning.use_cases.capacity import announce_capacity
from kernodeck_provisioning.use_cases.delivery import Clock, Hosts
from kernodeck_provisioning.use_cases.unit import BATCH, ProvisioningUnit, locked_node

log = logging.getLogger(__name__)

MAX_GPUS_PER_NODE = 64
CHECK_RETRY = timedelta(minutes=1)  # an unchecked node that could not be reached is tried again after this


def model_of(
    units: Units[ProvisioningUnit], model_id, catalog_model: Callable[[str], GpuModel | None]
) -> GpuModel | None:
    """The model as copied here, else as the catalog has it (`catalog_model`, asked outside any transaction)."""
    with units.transaction() as unit:
        known = unit.get_model(model_id) if isinstance(model_id, str) else None
    return known or catalog_model(model_id)


def add_node(
    units: Units[ProvisioningUnit],
    host: str,
    port: int,
    host_key: str,
    model: GpuModel | None,
    model_id: str,
    gpu_count: int,
    note: str,
    now: datetime,
) -> Node:
    """Registered unchecked (one rental at a time until checked)."""
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
    with units.transaction() as unit:
        existing = unit.get_model(model.id, lock=True)
        if existing is None:
            unit.save_model(model)
        if unit.node_at(host, port) is not None:
            raise ServiceError(ErrorCode.ALREADY_EXISTS, f"a node at {host}:{port} is registered already")
        node = Node(
            uuid4().hex[:12], host, port, host_key, model.id, model.backend, gpu_count, NodeState.AVAILABLE, now, note
        )
        unit.save_node(node)
        announce_capacity(unit, model.id)
    log.info("node added", extra={"node_id": node.id, "model": node.model_id, "gpus": node.gpu_count})
    return node


def check_node(units: Units[ProvisioningUnit], hosts: Hosts, node_id: str, clock: Clock) -> None:
    """Check over SSH what the node provides to keep rentals apart, and record it on the node."""
    with units.transaction() as unit:
        node = unit.get_node(node_id)
    if node is None:
        return
    try:
        found = hosts.check(node)
    except NodeRefused as refused:
        log.warning("a node's isolation could not be checked", extra={"node_id": node_id, "reason": str(refused)})
        node_check_failed(units, node_id, str(refused), clock())
        return
    metrics.NODE_CHECKS.labels(found.isolation).inc()
    log.log(
        logging.INFO if found.isolation == Isolation.KERNEL else logging.WARNING,
        "node checked",
        extra={"node_id": node_id, "isolation": found.isolation, "note": found.note},
    )
    node_checked(units, node_id, Isolation(found.isolation), found.note, clock())


def nodes_to_check(units: Units[ProvisioningUnit], now: datetime) -> list[str]:
    with units.transaction() as unit:
        return [node.id for node in unit.nodes_to_check(now - CHECK_RETRY, BATCH)]


def node_checked(
    units: Units[ProvisioningUnit], node_id: str, isolation: Isolation, note: str, now: datetime
) -> Node | None:
    """What the node's check found; a node that cannot isolate takes one rental at a time from now on."""
    with units.transaction() as unit:
        node = locked_node(unit, node_id)
        if node is None:
            return None
        node.isolation, node.isolation_note, node.isolation_checked_at = isolation, note[:500], now
        unit.save_node(node)
        announce_capacity(unit, node.model_id)
        return node


def node_check_failed(units: Units[ProvisioningUnit], node_id: str, reason: str, now: datetime) -> Node | None:
    """The check could not reach the node: what was known of it stays; an unchecked one is tried again later."""
    with units.transaction() as unit:
        node = locked_node(unit, node_id)
        if node is None:
            return None
        node.isolation_checked_at = now
        if node.isolation == Isolation.UNCHECKED:
            node.isolation_note = f"not checked: {reason}"[:500]
        unit.save_node(node)
        return node


def set_node_state(units: Units[ProvisioningUnit], node_id: str, state: str, note: str) -> Node:
    try:
        target = NodeState(state)
    except ValueError:
        raise ServiceError.field("state", f"one of {', '.join(NodeState)}") from None
    with units.transaction() as unit:
        node = unit.get_node(node_id)
        if node is None:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such node")
        unit.get_model(node.model_id, lock=True)
        move_node(node, target, unit.live_rentals_on(node.id))
        node.note = note[:500]
        unit.save_node(node)
        announce_capacity(unit, node.model_id)
    log.info("node state set", extra={"node_id": node_id, "state": state})
    return node


def node_view(units: Units[ProvisioningUnit], node_id: str) -> dict:
    with units.transaction() as unit:
        node = unit.get_node(node_id)
        if node is None:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such node")
        return _view(unit, node)


def list_nodes(units: Units[ProvisioningUnit]) -> list[dict]:
    with units.transaction() as unit:
        return [_view(unit, node) for node in unit.list_nodes()]


def _view(unit: ProvisioningUnit, node: Node) -> dict:
    claimed = unit.claimed_on([node.id])[node.id]
    return {
        "id": node.id,
        "host": node.host,
        "port": node.port,
        "host_key": node.host_key,
        "model": node.model_id,
        "backend": node.backend,
        "gpu_count": node.gpu_count,
        "gpus_in_use": len(claimed),
        "live_rentals": unit.live_rentals_on(node.id),
        "state": node.state.value,
        "note": node.note,
        "isolation": node.isolation.value,
        "isolation_note": node.isolation_note,
        "created_at": node.created_at.isoformat(),
    }
