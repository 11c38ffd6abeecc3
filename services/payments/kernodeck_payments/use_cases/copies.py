"""Payments' copies of the orders and the extensions it may take a payment for, kept from orders' and support's
events, each applied once (domain/orders.py and domain/extensions.py say what a copy holds)."""

from typing import Protocol

from kernodeck_contracts.events import ExtensionConfirmed, ExtensionPaid, OrderCreated, OrderStatusChanged
from kernodeck_kit.units import Units


class CopiesUnit(Protocol):
    def remember_order(self, event: OrderCreated) -> None:
        """A new order, awaiting payment; a status that arrived before it is kept."""

    def record_order_statuses(self, events: list[OrderStatusChanged]) -> None:
        """Each order's status as of the newest of `events` about it (of two as new, the later), unless a newer
        one is recorded already."""

    def copy_extension(self, event: ExtensionConfirmed) -> None:
        """A confirmed extension, unpaid; a copy kept already is left as it is."""

    def mark_extension_paid(self, extension_id: str) -> None: ...


def order_created(units: Units[CopiesUnit], event: OrderCreated) -> None:
    with units.consume(event) as unit:
        if unit is not None:
            unit.remember_order(event)


def order_statuses_changed(units: Units[CopiesUnit], events: list[OrderStatusChanged]) -> None:
    """A block's orders turn paid together: their statuses are copied in one unit, each once (each copy keeps the
    newest status, whatever the order it is applied in)."""
    with units.consume_each(events) as (unit, fresh):
        unit.record_order_statuses(fresh)


def extension_confirmed(units: Units[CopiesUnit], event: ExtensionConfirmed) -> None:
    with units.consume(event) as unit:
        if unit is not None:
            unit.copy_extension(event)


def extension_paid(units: Units[CopiesUnit], event: ExtensionPaid) -> None:
    """Paid: no further payment is opened for it."""
    with units.consume(event) as unit:
        if unit is not None:
            unit.mark_extension_paid(event.extension_id)
