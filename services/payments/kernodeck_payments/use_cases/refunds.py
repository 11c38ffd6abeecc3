"""Money an order could not use goes back to the customer's balance: a payment its order refused (paid already,
cancelled), or everything paid for an order whose delivery failed.

Each payment is given back at most once, under one key (ledger.domain.refund_key) whichever way it comes back,
and never beyond what the order still has in sales. Both ways lock the order first, so that two refusals
arriving at once (a failed delivery and a second payment refused, two failure reports) decide one after the
other, each reading what the other booked."""

import logging
from datetime import datetime
from typing import Protocol

from kernodeck_contracts.events import Event, ExtensionPaymentRefused, PaymentRefused, ProvisioningFailed
from kernodeck_kit.units import Units
from kernodeck_payments.domain.reconcile import Credit
from kernodeck_payments.ledger.domain import Reason, refund_key
from kernodeck_payments.use_cases.settlement import credit_balance

log = logging.getLogger(__name__)


class RefundUnit(Protocol):
    def lock_order(self, order_id: str) -> None:
        """Until the unit ends, no other unit decides a refund of this order."""

    def bookings(self, order_id: str) -> list[tuple[str, int]]:
        """(payment id, cents) of each payment booked into sales for the order, oldest first."""

    def left_in_sales(self, order_id: str) -> int:
        """What the order's payments put into sales, less what was given back already."""

    def refunded(self, payment_ids: list[str]) -> set[str]:
        """Those of the payments given back already."""

    def credit(self, account_id: str, credit: Credit, ref: str, now: datetime) -> bool: ...
    def emit(self, event: Event) -> None: ...


def payment_refused(units: Units[RefundUnit], event: PaymentRefused, now: datetime) -> int:
    """Give back a payment its order refused (paid already, cancelled), once; the cents credited (0 when given
    back already)."""
    with units.consume(event) as unit:
        if unit is None:
            return 0
        unit.lock_order(event.order_id)
        if unit.refunded([event.payment_id]):
            return 0
        cents = min(event.amount_usd_cents, unit.left_in_sales(event.order_id))
        return _give_back(unit, event.account_id, event.payment_id, cents, now)


def extension_payment_refused(units: Units[RefundUnit], event: ExtensionPaymentRefused, now: datetime) -> None:
    """Give back a payment support could not use (the extension paid already, past due, the rental over), once."""
    with units.consume(event) as unit:
        if unit is not None:
            credit = Credit(event.amount_usd_cents, Reason.REFUSED_PAYMENT, refund_key(event.payment_id))
            credit_balance(unit, event.account_id, credit, event.payment_id, now)


def provisioning_failed(units: Units[RefundUnit], event: ProvisioningFailed, now: datetime) -> int:
    """Give back every payment of an order whose delivery failed that was not given back already, once; the
    cents credited."""
    with units.consume(event) as unit:
        if unit is None:
            return 0
        unit.lock_order(event.order_id)
        bookings = unit.bookings(event.order_id)
        done = unit.refunded([payment_id for payment_id, _ in bookings])
        left = unit.left_in_sales(event.order_id)
        credited = 0
        for payment_id, cents in bookings:
            if payment_id not in done:
                credited += _give_back(unit, event.account_id, payment_id, min(cents, left - credited), now)
    if credited:
        log.info("failed order refunded to the balance", extra={"order_id": event.order_id})
    return credited


def _give_back(unit: RefundUnit, account_id: str, payment_id: str, cents: int, now: datetime) -> int:
    if cents <= 0:
        return 0
    credit_balance(unit, account_id, Credit(cents, Reason.REFUSED_PAYMENT, refund_key(payment_id)), payment_id, now)
    return cents
