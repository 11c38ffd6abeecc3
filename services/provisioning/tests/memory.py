"""Provisioning's unit of work on plain objects (kernodeck_kit.memory): its use cases run here without a database,
with the same answers as the SQL unit."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from kernodeck_kit.memory import MemoryUnit
from kernodeck_kit.units import MemoryUnits
from kernodeck_provisioning.domain import (
    CLAIMING,
    PAID,
    GpuModel,
    Isolation,
    Node,
    NodeState,
    OrderCopy,
    Rental,
    RentalStatus,
    hold_lapsed,
    unpaid_hold,
)


@dataclass
class ProvisioningTables:
    models: dict[str, GpuModel] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    rentals: dict[str, Rental] = field(default_factory=dict)  # by order id
    orders: dict[str, OrderCopy] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)  # account id -> SSH public key


class MemoryProvisioning(MemoryUnit[ProvisioningTables]):
    def get_model(self, model_id: str, lock: bool = False) -> GpuModel | None:
        return self.read(self.tables.models, model_id)

    def save_model(self, model: GpuModel) -> None:
        self.put(self.tables.models, model)

    def list_models(self) -> list[GpuModel]:
        return self.where(self.tables.models, lambda model: True)

    def nodes_of_model(self, model_id: str) -> list[Node]:
        return self.where(self.tables.nodes, lambda node: node.model_id == model_id)

    def get_node(self, node_id: str) -> Node | None:
        return self.read(self.tables.nodes, node_id)

    def node_at(self, host: str, port: int) -> Node | None:
        return next(iter(self.where(self.tables.nodes, lambda node: (node.host, node.port) == (host, port))), None)

    def list_nodes(self) -> list[Node]:
        return self.where(self.tables.nodes, lambda node: True)

    def save_node(self, node: Node) -> None:
        self.put(self.tables.nodes, node)

    def claimed_on(self, node_ids: list[str]) -> dict[str, set[int]]:
        claimed = {node_id: set() for node_id in node_ids}
        for rental in self.tables.rentals.values():
            if rental.node_id in claimed:
                taken = claimed[rental.node_id]
                if taken & set(rental.claims):
                    raise AssertionError(f"GPU claimed twice on {rental.node_id}")
                taken.update(rental.claims)
        return claimed

    def live_rentals_on(self, node_id: str) -> int:
        return sum(1 for r in self.tables.rentals.values() if r.node_id == node_id and r.status in CLAIMING)

    def get_rental(self, order_id: str) -> Rental | None:
        return self.read(self.tables.rentals, order_id)

    def save_rental(self, rental: Rental) -> None:
        others = [
            r for r in self.tables.rentals.values() if r.order_id != rental.order_id and r.node_id == rental.node_id
        ]
        if rental.claims and any(set(r.claims) & set(rental.claims) for r in others):
            raise AssertionError(f"GPU claimed twice on {rental.node_id}")
        self.put(self.tables.rentals, rental, rental.order_id)

    def lapsed_holds(self, model_id: str | None, now: datetime, limit: int) -> list[Rental]:
        return self.where(
            self.tables.rentals, lambda r: hold_lapsed(r, now) and (model_id is None or r.model_id == model_id)
        )[:limit]

    def lock_account(self, account_id: str) -> None:
        pass  # one transaction at a time

    def held_gpus(self, model_id: str) -> int:
        return sum(
            r.gpus for r in self.tables.rentals.values() if r.model_id == model_id and r.status == RentalStatus.HELD
        )

    def unpaid_held_by(self, account_id: str, now: datetime) -> int:
        return sum(r.gpus for r in self.tables.rentals.values() if r.account_id == account_id and unpaid_hold(r, now))

    def has_paid(self, account_id: str) -> bool:
        return any(r.account_id == account_id and r.status in PAID for r in self.tables.rentals.values())

    def unpaid_held_by_newcomers(self, model_id: str, now: datetime) -> int:
        return sum(
            r.gpus
            for r in self.tables.rentals.values()
            if r.model_id == model_id and unpaid_hold(r, now) and not self.has_paid(r.account_id)
        )

    def deliveries_due(self, now: datetime, limit: int) -> list[str]:
        due = self.where(
            self.tables.rentals,
            lambda r: (
                r.status == RentalStatus.DELIVERING
                and (r.delivery_lease_until is None or r.delivery_lease_until <= now)
            ),
        )
        return [r.order_id for r in due][:limit]

    def nodes_to_check(self, tried_before: datetime, limit: int) -> list[Node]:
        due = self.where(
            self.tables.nodes,
            lambda n: (
                n.isolation == Isolation.UNCHECKED
                and n.state != NodeState.RETIRED
                and (n.isolation_checked_at is None or n.isolation_checked_at <= tried_before)
            ),
        )
        return sorted(due, key=lambda n: n.created_at)[:limit]

    def rentals_with_leftovers(self, limit: int) -> list[Rental]:
        return sorted(self.where(self.tables.rentals, lambda r: bool(r.leftover_nodes)), key=lambda r: r.order_id)[
            :limit
        ]

    def ready_ending_before(self, before: datetime, limit: int) -> list[Rental]:
        due = self.where(self.tables.rentals, lambda r: r.status == RentalStatus.READY and r.ends_at <= before)
        return sorted(due, key=lambda r: r.ends_at)[:limit]

    def rentals_of(self, account_id: str, order_ids: list[str]) -> list[Rental]:
        return self.where(self.tables.rentals, lambda r: r.account_id == account_id and r.order_id in order_ids)

    def get_order(self, order_id: str) -> OrderCopy | None:
        return self.read(self.tables.orders, order_id)

    def save_order(self, order: OrderCopy) -> None:
        self.put(self.tables.orders, order, order.order_id)

    def account_key(self, account_id: str) -> str | None:
        return self.tables.keys.get(account_id)

    def set_account_key(self, account_id: str, key: str, now: datetime) -> None:
        self.tables.keys[account_id] = key


def memory_units() -> MemoryUnits:
    return MemoryUnits("provisioning", ProvisioningTables(), MemoryProvisioning)


def open_transactions(units: MemoryUnits) -> Callable[[], int]:
    """How many transactions are open on `units` right now: work outside the database (SSH, an RPC) checks it
    finds none."""
    depth = [0]
    transaction = units.transaction

    @contextmanager
    def counted() -> Iterator:
        depth[0] += 1
        try:
            with transaction() as unit:
                yield unit
        finally:
            depth[0] -= 1

    units.transaction = counted
    return lambda: depth[0]
