"""The unit of work in memory, for the rule tests: same answers as the SQL one, no database."""

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime

from kernodeck_contracts.events import Event
from kernodeck_provisioning.domain import (
    CLAIMING,
    GpuModel,
    Isolation,
    Node,
    NodeState,
    OrderCopy,
    Rental,
    RentalStatus,
    hold_lapsed,
)


class MemoryStore:
    """Tables as dicts; `transaction()` yields a unit of work and keeps nothing of one that raised."""

    def __init__(self):
        self.models: dict[str, GpuModel] = {}
        self.nodes: dict[str, Node] = {}
        self.rentals: dict[str, Rental] = {}
        self.orders: dict[str, OrderCopy] = {}
        self.keys: dict[str, str] = {}
        self.events: list[Event] = []

    @contextmanager
    def transaction(self) -> Iterator["MemoryUnitOfWork"]:
        saved = copy.deepcopy((self.models, self.nodes, self.rentals, self.orders, self.keys, self.events))
        try:
            yield MemoryUnitOfWork(self)
        except BaseException:
            self.models, self.nodes, self.rentals, self.orders, self.keys, self.events = saved
            raise


class MemoryUnitOfWork:
    def __init__(self, store: MemoryStore):
        self.s = store

    def emit(self, event: Event) -> None:
        self.s.events.append(event)

    def get_model(self, model_id, lock=False):
        return self.s.models.get(model_id)

    def save_model(self, model):
        self.s.models[model.id] = model

    def list_models(self):
        return list(self.s.models.values())

    def nodes_of_model(self, model_id):
        return [copy.copy(n) for n in self.s.nodes.values() if n.model_id == model_id]

    def get_node(self, node_id):
        node = self.s.nodes.get(node_id)
        return copy.copy(node) if node else None

    def node_at(self, host, port):
        return next((copy.copy(n) for n in self.s.nodes.values() if (n.host, n.port) == (host, port)), None)

    def list_nodes(self):
        return [copy.copy(n) for n in self.s.nodes.values()]

    def save_node(self, node):
        self.s.nodes[node.id] = copy.copy(node)

    def claimed_on(self, node_ids):
        claimed = {node_id: set() for node_id in node_ids}
        for rental in self.s.rentals.values():
            if rental.node_id in claimed:
                taken = claimed[rental.node_id]
                if taken & set(rental.claims):
                    raise AssertionError(f"GPU claimed twice on {rental.node_id}")
                taken.update(rental.claims)
        return claimed

    def live_rentals_on(self, node_id):
        return sum(1 for r in self.s.rentals.values() if r.node_id == node_id and r.status in CLAIMING)

    def get_rental(self, order_id):
        rental = self.s.rentals.get(order_id)
        return replace(rental) if rental else None

    def save_rental(self, rental):
        others = [r for r in self.s.rentals.values() if r.order_id != rental.order_id and r.node_id == rental.node_id]
        if rental.claims and any(set(r.claims) & set(rental.claims) for r in others):
            raise AssertionError(f"GPU claimed twice on {rental.node_id}")
        self.s.rentals[rental.order_id] = replace(rental)

    def lapsed_holds(self, model_id, now, limit):
        due = [
            replace(r)
            for r in self.s.rentals.values()
            if hold_lapsed(r, now) and (model_id is None or r.model_id == model_id)
        ]
        return due[:limit]

    def deliveries_due(self, now, limit):
        due = [
            r.order_id
            for r in self.s.rentals.values()
            if r.status == RentalStatus.DELIVERING and (r.delivery_lease_until is None or r.delivery_lease_until <= now)
        ]
        return due[:limit]

    def nodes_to_check(self, tried_before, limit):
        due = [
            copy.copy(n)
            for n in self.s.nodes.values()
            if n.isolation == Isolation.UNCHECKED
            and n.state != NodeState.RETIRED
            and (n.isolation_checked_at is None or n.isolation_checked_at <= tried_before)
        ]
        return sorted(due, key=lambda n: n.created_at)[:limit]

    def rentals_with_leftovers(self, limit):
        due = [replace(r) for r in self.s.rentals.values() if r.leftover_nodes]
        return sorted(due, key=lambda r: r.order_id)[:limit]

    def ready_ending_before(self, before: datetime, limit):
        due = [replace(r) for r in self.s.rentals.values() if r.status == RentalStatus.READY and r.ends_at <= before]
        return sorted(due, key=lambda r: r.ends_at)[:limit]

    def rentals_of(self, account_id, order_ids):
        return [replace(r) for r in self.s.rentals.values() if r.account_id == account_id and r.order_id in order_ids]

    def get_order(self, order_id):
        return self.s.orders.get(order_id)

    def save_order(self, order):
        self.s.orders[order.order_id] = order

    def account_key(self, account_id):
        return self.s.keys.get(account_id)

    def set_account_key(self, account_id, key, now):
        self.s.keys[account_id] = key
