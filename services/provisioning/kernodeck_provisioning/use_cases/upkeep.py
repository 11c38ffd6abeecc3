"""What the sweep timer does: lapsed holds released, end warnings sent, ended terms reclaimed, and the work on
nodes that runs beside the workers found (deliveries a stopped worker left behind, nodes to check, what failed
deliveries left on nodes)."""

from dataclasses import dataclass

from kernodeck_kit.units import Units
from kernodeck_provisioning.use_cases import capacity, inventory, term
from kernodeck_provisioning.use_cases.delivery import Clock, Hosts
from kernodeck_provisioning.use_cases.unit import BATCH, ProvisioningUnit


@dataclass(frozen=True)
class NodeWork:
    deliveries: list[str]  # order ids
    checks: list[str]  # node ids
    leftovers: list[tuple[str, str]]  # (order id, node id)


def sweep(units: Units[ProvisioningUnit], hosts: Hosts, clock: Clock) -> NodeWork:
    now = clock()
    with units.transaction() as unit:
        models = [model.id for model in unit.list_models()]
    for model_id in models:  # one transaction a model: each locks its own
        capacity.sweep_holds(units, model_id, now)
    term.send_warnings(units, now)
    with units.transaction() as unit:
        ending = unit.ready_ending_before(now, BATCH)
        due = unit.deliveries_due(now, BATCH)
        leftovers = [
            (rental.order_id, node_id)
            for rental in unit.rentals_with_leftovers(BATCH)
            for node_id in rental.leftover_nodes
        ]
    unchecked = inventory.nodes_to_check(units, now)
    for rental in ending:
        term.end_term(units, hosts, rental, now, clock)
    return NodeWork(due, unchecked, leftovers)
