"""What a payment for an order or an extension needs before intake opens it: the order payable (payments' copy,
or orders' own answer when its `order_created` has not come yet) and its GPUs held by provisioning; the
extension's copy, waited for a moment after its confirmation. Each call to another service is made between
transactions, never inside one."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Protocol

from kernodeck_contracts.errors import ServiceError
from kernodeck_kit.units import Units
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.extensions import PayableExtension, check_payable_extension
from kernodeck_payments.domain.intents import PaymentIntent, PaymentRequest, Purpose
from kernodeck_payments.domain.methods import Method
from kernodeck_payments.domain.orders import PayableOrder, check_cooling_off, check_payable, intent_deadline
from kernodeck_payments.use_cases.intake import IntakeUnit, open_payment, same_open_intent

# support publishes a confirmed extension right after its commit; its customer may ask to pay it before it arrives.
EXTENSION_ARRIVAL_S = 2.0
EXTENSION_POLL_S = 0.05


class InstructionsUnit(IntakeUnit, Protocol):
    def payable_order(self, order_id: str) -> PayableOrder | None:
        """Payments' copy of the order; None before any of its events came."""

    def payable_extension(self, extension_id: str) -> PayableExtension | None:
        """Payments' copy of the extension; None before its confirmation came."""

    def order_intents_expired_since(self, account_id: str, since: datetime, now: datetime) -> list[datetime]:
        """When the account's order intents that expired with nothing received since `since` expired, oldest first."""


class Orders(Protocol):
    def payable_order(self, account_id: str, order_id: str) -> PayableOrder:
        """The order as orders itself has it (not_found when it is not the account's)."""


class Provisioning(Protocol):
    def hold(self, order: PayableOrder, until: datetime, paid_now: bool) -> bool:
        """Hold the order's GPUs until `until`; True when this call took the hold (OUT_OF_CAPACITY when the GPUs
        are not there, SSH_KEY_REQUIRED when neither the order nor the account has a key). `paid_now`: the order
        is paid in the same breath, so the limits on unpaid holds do not apply."""

    def release(self, order_id: str) -> None: ...


def open_order_payment(
    units: Units[InstructionsUnit],
    settings: PaymentsSettings,
    orders: Orders,
    provisioning: Provisioning,
    method: Method,
    account_id: str,
    order_id: str,
    now: datetime,
) -> tuple[PaymentIntent, bool]:
    """The order's intent in `method`, and whether it is new: asked again, the open one comes back, and the GPUs'
    hold is not prolonged. No instructions for GPUs that are not there: they are held until the intent's
    deadline first."""
    copy, open_one, expired = _instructions_reads(units, settings, account_id, order_id, method, now)
    order = payable_order(units, orders, account_id, order_id, copy)
    if open_one is not None:
        return open_one, False
    check_cooling_off(expired, settings.expired_holds_limit, settings.expired_holds_window, now)
    deadline = intent_deadline(order, now, settings.intent_ttl, settings.intent_shortest)
    with holding(provisioning, order, deadline):
        request = PaymentRequest(method, Purpose.ORDER, account_id, order_id, order.total_usd_cents, deadline=deadline)
        intent = open_payment(units, settings, request, now)
    return intent, True


def _instructions_reads(
    units: Units[InstructionsUnit], settings: PaymentsSettings, account_id, order_id, method: Method, now: datetime
) -> tuple:
    """What instructions for an order need of payments' own data, read together (one transaction on their way,
    not three): its copy of the order (None when it has none), the order's open intent in `method` (None when
    none), and the account's order intents expired unpaid within the cooling-off window."""
    with units.transaction() as unit:
        expired = unit.order_intents_expired_since(account_id, now - settings.expired_holds_window, now)
        if not isinstance(order_id, str):
            return None, None, expired
        open_one = same_open_intent(unit.open_intents(account_id, now), method, Purpose.ORDER, order_id, now)
        return unit.payable_order(order_id), open_one, expired


def payable_order(
    units: Units[InstructionsUnit], orders: Orders, account_id, order_id, copy: PayableOrder | None = None
) -> PayableOrder:
    """The order from payments' own copy (`copy` when the caller read it) or, asked before its `order_created`
    came (the instant it was recorded), from orders itself, rather than after a wait for the event; payable now."""
    order = copy
    if isinstance(order_id, str):
        if order is None:
            with units.transaction() as unit:
                order = unit.payable_order(order_id)
        if order is None or order.total_usd_cents is None:  # only a status change of it has come, if anything
            order = orders.payable_order(account_id, order_id)
    return check_payable(order, account_id)


@contextmanager
def holding(provisioning: Provisioning, order: PayableOrder, until: datetime, paid_now: bool = False) -> Iterator[None]:
    """Hold the order's GPUs until `until`, then run the body; a hold this call took is given back if the body is
    refused, so both happen or neither does."""
    held = provisioning.hold(order, until, paid_now)
    try:
        yield
    except ServiceError:
        if held:
            provisioning.release(order.order_id)
        raise


def payable_extension(
    units: Units[InstructionsUnit],
    account_id,
    extension_id,
    now: Callable[[], datetime],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> PayableExtension:
    """The extension from payments' own copy, waited for a moment after its confirmation (its event is on its
    way; the customer pays it long after an operator confirmed it); payable now."""
    deadline = clock() + EXTENSION_ARRIVAL_S
    while True:
        found = None
        if isinstance(extension_id, str):
            with units.transaction() as unit:
                found = unit.payable_extension(extension_id)
        if found is not None or clock() > deadline:
            return check_payable_extension(found, account_id, now())
        sleep(EXTENSION_POLL_S)


def open_extension_payment(
    units: Units[InstructionsUnit],
    settings: PaymentsSettings,
    method: Method,
    account_id,
    extension_id,
    now: Callable[[], datetime],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> PaymentIntent:
    """A crypto intent for a confirmed extension (the rental's GPUs are the customer's already: no hold)."""
    extension = payable_extension(units, account_id, extension_id, now, clock, sleep)
    request = PaymentRequest(
        method, Purpose.EXTENSION, account_id, extension.extension_id, extension.price_usd_cents, extension.order_id
    )
    return open_payment(units, settings, request, now())
