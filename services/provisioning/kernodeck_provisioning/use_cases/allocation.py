"""Allocation: the copy provisioning keeps of an order, its cancellation (the hold given back) and its payment
(the hold becomes the customer's allocation, and its delivery is due)."""

import logging
from collections.abc import Callable
from dataclasses import replace

from kernodeck_contracts.events import OrderCreated, OrderStatusChanged, ProvisioningStarted
from kernodeck_contracts.ssh_keys import InvalidSshKey, canonical_ssh_key
from kernodeck_contracts.statuses import OrderStatus
from kernodeck_kit.units import Units
from kernodeck_provisioning.domain import OrderCopy, Rental, RentalStatus, move_rental, place, unix_user_for
from kernodeck_provisioning.use_cases.capacity import announce_capacity, loads_of, release_hold
from kernodeck_provisioning.use_cases.unit import ProvisioningUnit, fail

log = logging.getLogger(__name__)

CAPACITY_LOST = "capacity_lost"

# `order_of(account_id, order_id)`: the order as orders tells it, for one whose OrderCreated has not come.
OrderOf = Callable[[str, str], OrderCreated]


def order_created(units: Units[ProvisioningUnit], event: OrderCreated) -> None:
    with units.consume(event) as unit:
        if unit is not None:
            _copy(unit, event)


def order_status_changed(units: Units[ProvisioningUnit], event: OrderStatusChanged, order_of: OrderOf) -> bool:
    """A cancelled order gives its hold back; a paid one takes its GPUs: True when its delivery is to start."""
    if event.status == OrderStatus.CANCELLED:
        with units.consume(event) as unit:
            if unit is not None:
                _cancelled(unit, event.order_id)
        return False
    if event.status != OrderStatus.PAID:
        return False
    with units.transaction() as unit:
        known = unit.get_order(event.order_id) is not None
    # Its OrderCreated is late, or came before provisioning ran: orders is asked, before the transaction opens.
    created = None if known else order_of(event.account_id, event.order_id)
    with units.consume(event) as unit:
        if unit is None:
            return False
        if created is not None and unit.get_order(event.order_id) is None:
            _copy(unit, created)
        return _paid(unit, event.order_id)


def _copy(unit: ProvisioningUnit, event: OrderCreated) -> None:
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
    unit.save_order(
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


def _cancelled(unit: ProvisioningUnit, order_id: str) -> None:
    order = unit.get_order(order_id)
    if order is not None:
        unit.save_order(replace(order, cancelled=True))
    release_hold(unit, order_id, "order_cancelled")


def _paid(unit: ProvisioningUnit, order_id: str) -> bool:
    """The hold becomes the customer's allocation; True when a delivery is to start.

    A hold lost before the payment settled (a late transfer) is taken afresh
    when GPUs are free; otherwise the order fails and is refunded.
    """
    order = unit.get_order(order_id)
    unit.get_model(order.model_id, lock=True)
    rental = unit.get_rental(order_id)
    if rental is not None and rental.status not in (RentalStatus.HELD, RentalStatus.RELEASED):
        return False  # a redelivered or older event: already under way
    if rental is None or rental.status == RentalStatus.RELEASED:
        placement = place(loads_of(unit, order.model_id), order.total_gpus)
        rental = rental or Rental(order_id, order.account_id, order.model_id, order.total_gpus, RentalStatus.RELEASED)
        if placement is None:
            fail(unit, rental, CAPACITY_LOST, "the GPUs held for this order were released before the payment arrived")
            return False
        rental.node_id, rental.gpu_indices = placement.node.id, placement.gpu_indices
    move_rental(rental, RentalStatus.DELIVERING)
    rental.unix_user = unix_user_for(order_id)
    rental.delivery_lease_until = None
    rental.payments_in_flight = frozenset()
    unit.save_rental(rental)
    unit.emit(ProvisioningStarted(order_id=order_id, account_id=rental.account_id))
    announce_capacity(unit, rental.model_id)
    return True
