"""Money an order could not use goes back to the customer's balance: a payment its order refused (paid already,
cancelled), or everything paid for an order whose delivery failed.

Each payment is given back at most once, under one key (ledger.domain.refund_key) whichever way it comes back,
and never beyond what the order still has in sales. Both ways lock the order first, so that two refusals
arriving at once (a failed delivery and a second payment refused, two failure reports) decide one after the
other, each reading what the other booked."""

from datetime import datetime
from typing import Protocol

from kernodeck_contracts.events import Event
from kernodeck_kit.db import lock_key
from kernodeck_payments.domain.reconcile import Credit
from kernodeck_payments.ledger.domain import Reason, refund_key
from kernodeck_payments.ledger.store import booked_under, order_bookings, paid_for_order
from kernodeck_payments.settlement import SqlSettlement, credit_balance
from kernodeck_payments.store.intents import order_intent_ids

ORDER_LOCKS = 71  # the advisory lock namespace of payments' order refunds


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


class SqlRefunds(SqlSettlement):
    def lock_order(self, order_id: str) -> None:
        lock_key(self.session, ORDER_LOCKS, order_id)

    def bookings(self, order_id: str) -> list[tuple[str, int]]:
        return order_bookings(self.session, order_id)

    def left_in_sales(self, order_id: str) -> int:
        payment_ids = [*order_intent_ids(self.session, order_id), f"balance-{order_id}"]
        return paid_for_order(self.session, order_id, payment_ids)

    def refunded(self, payment_ids: list[str]) -> set[str]:
        used = booked_under(self.session, [refund_key(payment_id) for payment_id in payment_ids])
        return {payment_id for payment_id in payment_ids if refund_key(payment_id) in used}


def refund_refused_payment(
    unit: RefundUnit, order_id: str, account_id: str, payment_id: str, cents: int, now: datetime
) -> int:
    """Give back a payment the order refused; the cents credited (0 when given back already)."""
    unit.lock_order(order_id)
    if unit.refunded([payment_id]):
        return 0
    return _give_back(unit, account_id, payment_id, min(cents, unit.left_in_sales(order_id)), now)


def refund_failed_order(unit: RefundUnit, order_id: str, account_id: str, now: datetime) -> int:
    """Give back every payment of an order whose delivery failed that was not given back already; the cents."""
    unit.lock_order(order_id)
    bookings = unit.bookings(order_id)
    done = unit.refunded([payment_id for payment_id, _ in bookings])
    left = unit.left_in_sales(order_id)
    credited = 0
    for payment_id, cents in bookings:
        if payment_id not in done:
            given = _give_back(unit, account_id, payment_id, min(cents, left - credited), now)
            credited += given
    return credited


def _give_back(unit: RefundUnit, account_id: str, payment_id: str, cents: int, now: datetime) -> int:
    if cents <= 0:
        return 0
    credit_balance(unit, account_id, Credit(cents, Reason.REFUSED_PAYMENT, refund_key(payment_id)), payment_id, now)
    return cents
