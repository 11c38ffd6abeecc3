""" "J'ai payé": the customer says a payment is on its way; the watcher looks at its address now. On the
settlement unit (the intent locked as a transfer's event would lock it)."""

from dataclasses import replace
from datetime import datetime

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import PaymentReported
from kernodeck_kit.units import Units
from kernodeck_payments.domain.intents import PaymentIntent, Purpose, RecordedTransfer
from kernodeck_payments.use_cases.settlement import SettlementUnit


def report_payment(
    units: Units[SettlementUnit], account_id: str, payment_id: str, now: datetime
) -> tuple[PaymentIntent, list[RecordedTransfer]]:
    """Note the signal and ask the watcher to look, the first time only: pressing again changes nothing (no
    event, no timeline line, no look at the chain), so a payment costs the watcher one targeted look at most.
    Credits nothing. The intent, and its transfers so far."""
    with units.transaction() as unit:
        intent = unit.intent(payment_id)
        if intent is None or intent.account_id != account_id:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such payment")
        if intent.reported_at is None:
            intent = replace(intent, reported_at=now)
            unit.save_intent(intent)
            unit.emit(
                PaymentReported(
                    payment_id=intent.id,
                    order_id=intent.reference_id if intent.purpose == Purpose.ORDER else None,
                    account_id=account_id,
                    network=intent.network,
                    address=intent.address,
                )
            )
        return intent, unit.transfers_of(intent.id)
