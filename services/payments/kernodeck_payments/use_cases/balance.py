"""Paying an order or an extension from the balance, on a unit of work (the database's in the service, plain objects in tests)."""

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Protocol

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import BalanceDebited, Event, PaymentSettled
from kernodeck_kit.units import Units
from kernodeck_payments.domain.extensions import PayableExtension
from kernodeck_payments.domain.orders import PayableOrder
from kernodeck_payments.use_cases import instructions
from kernodeck_payments.use_cases.instructions import InstructionsUnit, Orders, Provisioning

# Long enough for orders to turn the debit into `paid`, which makes the hold an allocation.
BALANCE_HOLD = timedelta(minutes=10)


class BalanceUnit(Protocol):
    def debit_for_order(self, account_id: str, cents: int, order_id: str, key: str, at: datetime) -> bool:
        """Pay an order from the balance; False when this key was paid already, INSUFFICIENT_BALANCE when short."""

    def emit(self, event: Event) -> None: ...


def pay_order_from_balance(
    units: Units[BalanceUnit],
    intake: Units[InstructionsUnit],
    orders: Orders,
    provisioning: Provisioning,
    account_id: str,
    order_id,
    now: Callable[[], datetime],
) -> dict:
    """The order payable (instructions.payable_order) and its GPUs held, then paid from the balance; a hold this
    call took is given back when the balance refuses. Each call to another service is made between transactions."""
    order = instructions.payable_order(intake, orders, account_id, order_id)
    with instructions.holding(provisioning, order, now() + BALANCE_HOLD, paid_now=True):
        return pay_with_balance(units, account_id, order, now())


def pay_extension_from_balance(
    units: Units[BalanceUnit],
    intake: Units[InstructionsUnit],
    account_id: str,
    extension_id,
    now: Callable[[], datetime],
    clock: Callable[[], float],
    sleep: Callable[[float], None],
) -> dict:
    """A confirmed extension (its copy waited for a moment: instructions.payable_extension) paid from the balance."""
    extension = instructions.payable_extension(intake, account_id, extension_id, now, clock, sleep)
    return pay_extension_with_balance(units, account_id, extension, now())


def pay_with_balance(units: Units[BalanceUnit], account_id: str, order: PayableOrder, now: datetime) -> dict:
    """Settle the order from the account's balance, once; orders hears it as any settled payment."""
    return _settle(units, account_id, order.total_usd_cents, order.order_id, None, now)


def pay_extension_with_balance(
    units: Units[BalanceUnit], account_id: str, extension: PayableExtension, now: datetime
) -> dict:
    """Settle a confirmed extension from the account's balance, once; support hears it as any settled payment."""
    return _settle(units, account_id, extension.price_usd_cents, extension.order_id, extension.extension_id, now)


def _settle(
    units: Units[BalanceUnit], account_id: str, cents: int, order_id: str, extension_id: str | None, now: datetime
) -> dict:
    paid_for = extension_id or order_id  # what the debit pays: its ledger reference
    payment_id = f"balance-{paid_for}"
    with units.transaction() as unit:
        if not unit.debit_for_order(account_id, cents, paid_for, f"balance-payment:{paid_for}", now):
            what = "extension" if extension_id else "order"
            raise ServiceError(ErrorCode.INVALID_STATE, f"this {what} was already paid from the balance")
        unit.emit(
            PaymentSettled(
                payment_id=payment_id,
                order_id=order_id,
                extension_id=extension_id,
                account_id=account_id,
                amount_usd_cents=cents,
                method="balance",
            )
        )
        unit.emit(
            BalanceDebited(account_id=account_id, amount_usd_cents=cents, order_id=order_id, extension_id=extension_id)
        )
    return {"payment_id": payment_id, "order_id": order_id, "extension_id": extension_id, "amount_usd_cents": cents}
