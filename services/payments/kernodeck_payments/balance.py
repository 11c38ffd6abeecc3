"""Paying an order from the balance, on a unit of work (the database's in the service, plain objects in tests)."""

from datetime import datetime
from typing import Protocol

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import BalanceDebited, Event, PaymentSettled
from kernodeck_kit.outbox import Tx
from kernodeck_kit.units import Units
from kernodeck_payments.domain.orders import PayableOrder
from kernodeck_payments.ledger.store import debit_customer_for_order


class BalanceUnit(Protocol):
    def debit_for_order(self, account_id: str, cents: int, order_id: str, key: str, at: datetime) -> bool:
        """Pay an order from the balance; False when this key was paid already, INSUFFICIENT_BALANCE when short."""

    def emit(self, event: Event) -> None: ...


class SqlBalance:
    def __init__(self, tx: Tx):
        self.session = tx.session
        self.emit = tx.emit

    def debit_for_order(self, account_id: str, cents: int, order_id: str, key: str, at: datetime) -> bool:
        return debit_customer_for_order(self.session, account_id, cents, order_id, key, at)


def pay_with_balance(units: Units[BalanceUnit], account_id: str, order: PayableOrder, now: datetime) -> dict:
    """Settle the order from the account's balance, once; orders hears it as any settled payment."""
    payment_id = f"balance-{order.order_id}"
    with units.transaction() as unit:
        key = f"balance-payment:{order.order_id}"
        if not unit.debit_for_order(account_id, order.total_usd_cents, order.order_id, key, now):
            raise ServiceError(ErrorCode.INVALID_STATE, "this order was already paid from the balance")
        unit.emit(
            PaymentSettled(
                payment_id=payment_id,
                order_id=order.order_id,
                account_id=account_id,
                amount_usd_cents=order.total_usd_cents,
                method="balance",
            )
        )
        unit.emit(
            BalanceDebited(account_id=account_id, amount_usd_cents=order.total_usd_cents, order_id=order.order_id)
        )
    return {"payment_id": payment_id, "order_id": order.order_id, "amount_usd_cents": order.total_usd_cents}
