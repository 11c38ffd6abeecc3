"""What provisioning's use cases read and change in one transaction, and the reads they share."""

import logging
from datetime import datetime
from typing import Protocol

from kernodeck_contracts.events import Event, ProvisioningFailed
from kernodeck_provisioning.domain import GpuModel, Node, OrderCopy, Rental, RentalStatus, move_rental

log = logging.getLogger(__name__)

BATCH = 200


class ProvisioningUnit(Protocol):
    def emit(self, event: Event) -> None: ...

    def get_model(self, model_id: str, lock: bool = False) -> GpuModel | None:
        """`lock` serialises every change to the claims on this model's nodes until the transaction ends."""

    def save_model(self, model: GpuModel) -> None: ...

    def list_models(self) -> list[GpuModel]: ...

    def nodes_of_model(self, model_id: str) -> list[Node]: ...

    def get_node(self, node_id: str) -> Node | None: ...

    def node_at(self, host: str, port: int) -> Node | None: ...

    def list_nodes(self) -> list[Node]: ...

    def save_node(self, node: Node) -> None: ...

    def claimed_on(self, node_ids: list[str]) -> dict[str, set[int]]: ...

    def live_rentals_on(self, node_id: str) -> int: ...

    def get_rental(self, order_id: str) -> Rental | None: ...

    def save_rental(self, rental: Rental) -> None:
        """Insert or update; the rental's GPU claims follow it (none once it no longer claims)."""

    def lapsed_holds(self, model_id: str | None, now: datetime, limit: int) -> list[Rental]: ...

    def lock_account(self, account_id: str) -> None:
        """Serialise the account's new holds (on any model) until the transaction ends."""

    def held_gpus(self, model_id: str) -> int:
        """The model's GPUs in holds (lapsed ones not yet released among them)."""

    def unpaid_held_by(self, account_id: str, now: datetime) -> int:
        """The GPUs the account's unpaid, unlapsed holds set aside, on every model."""

    def has_paid(self, account_id: str) -> bool:
        """Whether one of the account's rentals was ever paid for."""

    def unpaid_held_by_newcomers(self, model_id: str, now: datetime) -> int:
        """The model's GPUs in unpaid, unlapsed holds of accounts that never paid for a rental."""

    def deliveries_due(self, now: datetime, limit: int) -> list[str]: ...

    def nodes_to_check(self, tried_before: datetime, limit: int) -> list[Node]:
        """Nodes whose isolation is unchecked and not tried since `tried_before` (retired ones left out)."""

    def rentals_with_leftovers(self, limit: int) -> list[Rental]: ...

    def ready_ending_before(self, before: datetime, limit: int) -> list[Rental]: ...

    def rentals_of(self, account_id: str, order_ids: list[str]) -> list[Rental]: ...

    def get_order(self, order_id: str) -> OrderCopy | None: ...

    def save_order(self, order: OrderCopy) -> None: ...

    def account_key(self, account_id: str) -> str | None: ...

    def set_account_key(self, account_id: str, key: str, now: datetime) -> None: ...


def locked_node(unit: ProvisioningUnit, node_id: str) -> Node | None:
    """The node, read again after its model is locked."""
    node = unit.get_node(node_id)
    if node is None:
        return None
    unit.get_model(node.model_id, lock=True)
    return unit.get_node(node_id)


def locked_rental(unit: ProvisioningUnit, order_id: str) -> Rental | None:
    """The rental, read again after its model is locked, so that no other worker changes it meanwhile."""
    rental = unit.get_rental(order_id)
    if rental is None:
        return None
    unit.get_model(rental.model_id, lock=True)
    return unit.get_rental(order_id)


def fail(unit: ProvisioningUnit, rental: Rental, reason: str, detail: str) -> None:
    move_rental(rental, RentalStatus.FAILED, reason)
    unit.save_rental(rental)
    unit.emit(ProvisioningFailed(order_id=rental.order_id, account_id=rental.account_id, reason=f"{reason}: {detail}"))
    log.error("provisioning failed", extra={"order_id": rental.order_id, "reason": reason})
