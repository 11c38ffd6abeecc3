"""The orders' use cases, on a unit of work (the database's in the service, plain objects in tests)."""

import logging
from datetime import datetime, timedelta
from typing import Protocol

from kernodeck_contracts.errors import ErrorCode, EventTooEarly, ServiceError
from kernodeck_contracts.events import (
    Event,
    PaymentInstructionsCreated,
    PaymentRefused,
    PaymentReported,
    PaymentSettled,
    PaymentStatusChanged,
    RentalExtended,
)
from kernodeck_contracts.rpc import Quote
from kernodeck_contracts.statuses import PaymentStatus
from kernodeck_contracts.timeline import Said, TimelineCode, paid, payment_reported, rental_extended
from kernodeck_kit.paging import Page
from kernodeck_kit.units import Units
from kernodeck_orders.domain import (
    PAYMENT_REPORTED,
    RENTAL_EXTENDED,
    Order,
    OrderLimits,
    OrderStatus,
    PaymentInFlight,
    RentalDates,
    StaleOrder,
    TimelineEntry,
    cancel_by_customer,
    check_order_limits,
    follow_delivery,
    is_due_for_cancellation,
    new_order,
    note,
    summary_of,
    transition,
)
from kernodeck_orders.events import order_created, status_changed

log = logging.getLogger(__name__)


class OrdersUnit(Protocol):
    def add(self, order: Order) -> None: ...
    def read_ahead(self, order_ids: list[str]) -> None:
        """Read these orders at once; `get` then answers from what was read, as the unit changed it since."""

    def get(self, order_id: str) -> Order | None: ...
    def list_for(self, account_id: str, page: Page) -> list[Order]:
        """One page of the account's orders, newest first (one more than its limit when there is more)."""

    def save_transition(self, order: Order, entry: TimelineEntry) -> None:
        """Record a status change made on `order`; StaleOrder when it moved since it was read."""

    def save_rental(self, order: Order) -> None:
        """Record the rental's dates as provisioning reported them."""

    def add_note(self, order: Order, entry: TimelineEntry) -> None: ...
    def lock_account(self, account_id: str) -> None:
        """Serialise the account's new orders until the transaction ends."""

    def unpaid_count(self, account_id: str) -> int:
        """The account's orders awaiting payment."""

    def created_since(self, account_id: str, since: datetime) -> list[datetime]:
        """When the account's orders created since `since` were, oldest first."""

    def unpaid_order_ids(self, created_before: datetime, now: datetime, limit: int) -> list[str]:
        """Orders awaiting payment created before `created_before`, none a payment can still arrive for at `now`,
        oldest first."""

    def track_payments(self, payments: list[PaymentInFlight]) -> None:
        """Keep each payment's newest status, and its deadline once known, whatever their order."""

    def payment_in_flight(self, order_id: str, now: datetime) -> bool:
        """Whether a payment can still arrive for the order (PaymentInFlight.can_still_arrive)."""

    def emit(self, event: Event) -> None: ...


class OrderNotPaidYet(EventTooEarly):
    """A delivery event came before the order's own `paid`: the event is retried after a pause."""


def create_order(
    units: Units[OrdersUnit],
    order_id: str,
    account_id: str,
    quote: Quote,
    now: datetime,
    unpaid_ttl: timedelta,
    limits: OrderLimits,
    ssh_public_key: str | None = None,
    preparation_note: str | None = None,
) -> Order:
    """A new order at the quote's price, within the account's `limits`."""
    if not quote.available:
        raise ServiceError(
            ErrorCode.OUT_OF_CAPACITY, f"{quote.model_name} has fewer than {quote.lots} lots free right now"
        )
    order = new_order(order_id, account_id, summary_of(quote), now, ssh_public_key, preparation_note)
    with units.transaction() as unit:
        unit.lock_account(account_id)
        created = unit.created_since(account_id, now - limits.window)
        check_order_limits(limits, unit.unpaid_count(account_id), created, now)
        unit.add(order)
        unit.emit(order_created(order, unpaid_ttl))
    return order


def list_orders(units: Units[OrdersUnit], account_id: str, page: Page) -> list[Order]:
    """One page of the account's orders, newest first, and one more when there is a next page."""
    with units.transaction() as unit:
        return unit.list_for(account_id, page)


def get_order(units: Units[OrdersUnit], account_id: str, order_id: str) -> Order:
    with units.transaction() as unit:
        return _owned(unit.get(order_id), account_id)


def cancel_order(units: Units[OrdersUnit], account_id: str, order_id: str, now: datetime) -> Order:
    with units.transaction() as unit:
        order = _owned(unit.get(order_id), account_id)
        previous = order.status
        _record(unit, order, previous, cancel_by_customer(order, now))
    return order


def cancel_unpaid_orders(units: Units[OrdersUnit], now: datetime, unpaid_ttl: timedelta, batch: int) -> int:
    """Cancel the orders left unpaid past the TTL, up to `batch`; how many."""
    with units.transaction() as unit:
        candidates = unit.unpaid_order_ids(created_before=now - unpaid_ttl, now=now, limit=batch)
    return sum(_cancel_if_unpaid(units, order_id, now, unpaid_ttl) for order_id in candidates)


def _cancel_if_unpaid(units: Units[OrdersUnit], order_id: str, now: datetime, unpaid_ttl: timedelta) -> bool:
    try:
        with units.transaction() as unit:
            order = unit.get(order_id)
            if not is_due_for_cancellation(order, now, unpaid_ttl) or unit.payment_in_flight(order_id, now):
                return False
            previous = order.status
            _record(
                unit,
                order,
                previous,
                transition(order, OrderStatus.CANCELLED, now, Said(TimelineCode.CANCELLED_UNPAID)),
            )
    except ServiceError:
        log.info("order moved while the sweep cancelled it; left as it is", extra={"order_id": order_id})
        return False
    log.info("unpaid order cancelled", extra={"order_id": order_id})
    return True


def apply_payments_settled(units: Units[OrdersUnit], events: list[PaymentSettled], now: datetime) -> None:
    """Settled payments that came together (a block's), in one unit, each applied once and in their order: one
    of at least the order's total makes it paid; one the order cannot take (another account's, paid or cancelled
    already, short of the total) goes back as refused. An extension's payment is support's to apply, not the
    order's."""
    for_orders = [event for event in events if event.extension_id is None]
    if not for_orders:
        return
    with units.consume_each(for_orders) as (unit, fresh):
        unit.read_ahead([event.order_id for event in fresh])
        for event in fresh:
            _apply_settled(unit, event, now)


def _apply_settled(unit: OrdersUnit, event: PaymentSettled, now: datetime) -> None:
    order = unit.get(event.order_id)
    if order is None or order.account_id != event.account_id:
        _refuse(unit, event, "unknown_order")
    elif order.status != OrderStatus.AWAITING_PAYMENT:
        _refuse(unit, event, f"order_{order.status.value}")
    elif event.amount_usd_cents < order.summary.total_usd_cents:
        _refuse(unit, event, "short_of_total")  # never paid for less than its total: the money goes back
    else:
        previous = order.status
        _record(unit, order, previous, transition(order, OrderStatus.PAID, now, paid(event.method)))


def follow_payments(
    units: Units[OrdersUnit], events: list[PaymentInstructionsCreated] | list[PaymentStatusChanged]
) -> None:
    """Payments' account of orders' crypto payments, events of one type that came together, in one unit, each
    applied once: while a payment can still arrive (instructions standing, a transfer seen or confirming), the
    unpaid sweep leaves its order alone."""
    of_orders = [event for event in events if event.purpose == "order" and event.order_id is not None]
    if not of_orders:
        return
    with units.consume_each(of_orders) as (unit, fresh):
        unit.track_payments([_in_flight(event) for event in fresh])


def _in_flight(event: PaymentInstructionsCreated | PaymentStatusChanged) -> PaymentInFlight:
    if isinstance(event, PaymentInstructionsCreated):
        return PaymentInFlight(
            event.payment_id, event.order_id, PaymentStatus.AWAITING_TRANSFER, event.occurred_at, event.expires_at
        )
    return PaymentInFlight(event.payment_id, event.order_id, event.status, event.occurred_at)


def note_payment_reported(units: Units[OrdersUnit], event: PaymentReported, now: datetime) -> None:
    """The customer's "J'ai payé" goes into the order's timeline; the order does not move."""
    if event.order_id is None:
        return
    with units.consume(event) as unit:
        order = unit.get(event.order_id) if unit is not None else None
        if order is not None and order.account_id == event.account_id:
            entry = note(order, now, PAYMENT_REPORTED, payment_reported(event.network))
            unit.add_note(order, entry)


def follow_delivery_event(
    units: Units[OrdersUnit], event: Event, target: OrderStatus, said: Said, now: datetime, dates: RentalDates | None
) -> None:
    """Provisioning's report moves the order (through any status it skipped), once per event."""
    with units.consume(event) as unit:
        order = unit.get(event.order_id) if unit is not None else None
        if order is None:
            return
        if order.status == OrderStatus.AWAITING_PAYMENT:
            raise OrderNotPaidYet(event.order_id)  # orders' own `paid` is still being applied: retried
        previous = order.status
        for entry in follow_delivery(order, target, now, said):
            _record(unit, order, previous, entry)
            previous = order.status
        if dates is not None and order.rental is None:
            order.rental = dates
            unit.save_rental(order)


def note_event(units: Units[OrdersUnit], event: Event, kind: str, said: Said, now: datetime) -> None:
    """Another service's news about an order (an end warning, support's answer...) goes into its timeline, once."""
    with units.consume(event) as unit:
        order = unit.get(event.order_id) if unit is not None else None
        if order is not None and order.account_id == event.account_id:
            unit.add_note(order, note(order, now, kind, said))


def extend_rental(units: Units[OrdersUnit], event: RentalExtended, now: datetime) -> None:
    with units.consume(event) as unit:
        order = unit.get(event.order_id) if unit is not None else None
        if order is None or order.rental is None:
            return
        order.rental.ends_at = event.ends_at
        unit.save_rental(order)
        unit.add_note(order, note(order, now, RENTAL_EXTENDED, rental_extended(event.ends_at)))


def _owned(order: Order | None, account_id: str) -> Order:
    # Another account's order gets the same answer as a missing one: its existence is not revealed.
    if order is None or order.account_id != account_id:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
    return order


def _refuse(unit: OrdersUnit, event: PaymentSettled, reason: str) -> None:
    log.warning(
        "settled payment refused", extra={"order_id": event.order_id, "payment_id": event.payment_id, "reason": reason}
    )
    unit.emit(
        PaymentRefused(
            order_id=event.order_id,
            account_id=event.account_id,
            payment_id=event.payment_id,
            amount_usd_cents=event.amount_usd_cents,
            reason=reason,
        )
    )


def _record(unit: OrdersUnit, order: Order, previous: OrderStatus, entry: TimelineEntry) -> None:
    """Save a status change made on `order` unless another worker changed it meanwhile, and announce it."""
    try:
        unit.save_transition(order, entry)
    except StaleOrder:
        raise ServiceError(ErrorCode.INVALID_STATE, "the order changed meanwhile; reload it") from None
    unit.emit(status_changed(order, previous, entry.said.code))
