"""The rental's term: warnings before its end, the end (the node reclaimed, the GPUs free), paid extensions."""

from datetime import datetime, timedelta

from kernodeck_contracts.errors import EventTooEarly, ServiceError
from kernodeck_contracts.events import ExtensionPaid, RentalEnded, RentalEnding, RentalExtended, RentalExtensionRefused
from kernodeck_kit.units import Units
from kernodeck_provisioning.domain import (
    WARNING_HOURS,
    Rental,
    RentalStatus,
    extend_term,
    move_rental,
    warnings_due,
)
from kernodeck_provisioning.use_cases.capacity import announce_capacity
from kernodeck_provisioning.use_cases.delivery import Clock, Hosts, reclaim
from kernodeck_provisioning.use_cases.unit import BATCH, ProvisioningUnit, locked_rental


class OrderNotYetKnown(EventTooEarly):
    """The rental an event is about has not arrived yet: the event is retried."""


def send_warnings(units: Units[ProvisioningUnit], now: datetime) -> int:
    sent = 0
    with units.transaction() as unit:
        for candidate in unit.ready_ending_before(now + timedelta(hours=max(WARNING_HOURS)), BATCH):
            rental = locked_rental(unit, candidate.order_id)
            due = warnings_due(rental, now)
            if not due:
                continue
            rental.warned_hours = (*rental.warned_hours, *due)
            unit.save_rental(rental)
            unit.emit(
                RentalEnding(
                    order_id=rental.order_id, account_id=rental.account_id, ends_at=rental.ends_at, hours_left=min(due)
                )
            )
            sent += 1
    return sent


def end_term(units: Units[ProvisioningUnit], hosts: Hosts, rental: Rental, now: datetime, clock: Clock) -> bool:
    """The term is over: the node reclaimed first, then the rental ended."""
    with units.transaction() as unit:
        node = unit.get_node(rental.node_id)
    return reclaim(units, hosts, node, rental.unix_user, rental.order_id, clock) and ended(units, rental.order_id, now)


def ended(units: Units[ProvisioningUnit], order_id: str, now: datetime) -> bool:
    """The node was reclaimed and wiped: the GPUs are free again."""
    with units.transaction() as unit:
        rental = locked_rental(unit, order_id)
        if rental is None or rental.status != RentalStatus.READY or rental.ends_at > now:
            return False
        move_rental(rental, RentalStatus.ENDED, "term_over")
        rental.access_secret = ""
        unit.save_rental(rental)
        unit.emit(RentalEnded(order_id=order_id, account_id=rental.account_id, ended_at=now))
        announce_capacity(unit, rental.model_id)
        return True


def extension_paid(units: Units[ProvisioningUnit], event: ExtensionPaid, now: datetime) -> bool:
    with units.consume(event) as unit:
        if unit is None:
            return False
        return _extend(unit, event.order_id, event.extension_id, event.extra_days, now)


def _extend(unit: ProvisioningUnit, order_id: str, extension_id: str, extra_days: int, now: datetime) -> bool:
    rental = locked_rental(unit, order_id)
    if rental is None:
        raise OrderNotYetKnown(order_id)
    try:
        if not extend_term(rental, extension_id, extra_days):
            return False
    except ServiceError:  # over before the paid extension reached it: support refunds it
        unit.emit(
            RentalExtensionRefused(
                order_id=order_id, account_id=rental.account_id, extension_id=extension_id, reason=rental.status
            )
        )
        return False
    if rental.ends_at is not None:
        rental.warned_hours = tuple(h for h in rental.warned_hours if rental.ends_at - now <= timedelta(hours=h))
    unit.save_rental(rental)
    if rental.ends_at is not None:
        unit.emit(
            RentalExtended(
                order_id=order_id, account_id=rental.account_id, extension_id=extension_id, ends_at=rental.ends_at
            )
        )
    return True
