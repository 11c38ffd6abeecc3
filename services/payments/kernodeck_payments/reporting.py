""" "J'ai payé": the customer says a payment is on its way; the watcher looks at its address now."""

from datetime import datetime

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import PaymentReported
from kernodeck_kit.outbox import Tx
from kernodeck_payments.domain.intents import Purpose
from kernodeck_payments.store.intents import get_intent
from kernodeck_payments.store.tables import PaymentIntent


def report_payment(tx: Tx, account_id: str, payment_id: str, now: datetime) -> PaymentIntent:
    """Note the signal and ask the watcher to look, the first time only: pressing again changes nothing (no
    event, no timeline line, no look at the chain), so a payment costs the watcher one targeted look at most.
    Credits nothing."""
    intent = get_intent(tx.session, payment_id, lock=True)
    if intent is None or intent.account_id != account_id:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such payment")
    if intent.reported_at is not None:
        return intent
    intent.reported_at = now
    tx.session.add(intent)
    tx.emit(
        PaymentReported(
            payment_id=intent.id,
            order_id=intent.reference_id if intent.purpose == Purpose.ORDER else None,
            account_id=account_id,
            network=intent.network,
            address=intent.address,
        )
    )
    return intent
