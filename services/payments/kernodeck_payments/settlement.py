"""Chain events in, decisions out: record transfers, reconcile intents, apply the outcome."""

import logging
from datetime import datetime
from functools import cache

from kernodeck_contracts.events import BalanceCredited, ChainTransfer, PaymentSettled
from kernodeck_kit.outbox import Tx
from kernodeck_payments import metrics
from kernodeck_payments.availability import current_price
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.amounts import usd_cents_for
from kernodeck_payments.domain.intents import Purpose, TransferState, normalize_token, transfer_key
from kernodeck_payments.domain.methods import find_method
from kernodeck_payments.domain.reconcile import Credit, reconcile
from kernodeck_payments.ledger.domain import Reason
from kernodeck_payments.ledger.store import credit_customer, record_order_payment, refund_refused_payment
from kernodeck_payments.store.intents import as_intent, as_transfer, get_transfer, intent_at, transfers_of
from kernodeck_payments.store.reviews import open_review
from kernodeck_payments.store.tables import ChainTransferRow, PaymentIntent
from kernodeck_payments.tracking import status_changed

log = logging.getLogger(__name__)


def record_transfer(tx: Tx, event: ChainTransfer, state: TransferState, now: datetime) -> PaymentIntent | None:
    """Store what the watcher saw; returns the intent to reconcile, locked, or None when nothing changed.

    Every transfer is kept, even on an address no intent owns (then it goes
    to review once confirmed). An event older than the last one applied is ignored.
    """
    session = tx.session
    # The owner is locked before its transfer is read: events on one intent
    # apply one at a time, each reading what the one before it wrote.
    owner = intent_at(session, event.network, event.address, lock=True)
    row = get_transfer(session, event.network, event.txid, event.index)
    if row is None:
        row = ChainTransferRow(
            network=event.network,
            txid=event.txid,
            index=event.index,
            address=event.address,
            intent_id=owner.id if owner else None,
            amount=event.amount,
            state=state,
            sequence=event.sequence,
            first_seen_at=min(event.occurred_at, now),
            updated_at=now,
        )
    elif event.sequence <= row.sequence:
        return None
    else:
        row.first_seen_at = min(row.first_seen_at, event.occurred_at)
    # A transfer first seen before an intent owned its address stays unattributed.
    intent = owner if owner is not None and row.intent_id == owner.id else None
    required = intent.required_confirmations if intent else 1
    if state == TransferState.CONFIRMED and event.confirmations < required:
        state = TransferState.CONFIRMING  # the watcher's threshold is not ours: count again
    row.token = normalize_token(event.network, event.token)
    row.amount, row.state, row.sequence = event.amount, state, event.sequence
    row.confirmations, row.block_height, row.block_hash = event.confirmations, event.block_height, event.block_hash
    row.updated_at = now
    session.add(row)
    session.flush()
    if row.intent_id is None and state == TransferState.CONFIRMED:
        key = transfer_key(event.network, event.txid, event.index)
        open_review(session, f"unknown_address:{key}", "unknown_address", now, transfer_key=key)
    return intent


def reconcile_intent(tx: Tx, row: PaymentIntent, now: datetime, settings: PaymentsSettings) -> None:
    """Bring one intent, locked by the caller, up to date with its transfers, exactly once per cause."""
    session = tx.session
    method = find_method(row.asset, row.network)
    intent = as_intent(row)
    transfer_rows = {transfer_key(t.network, t.txid, t.index): t for t in transfers_of(session, row.id)}
    transfers = [as_transfer(t) for t in transfer_rows.values()]
    token = normalize_token(row.network, row.token)
    price_now = cache(lambda: current_price(session, settings, method.rate_symbol, now))
    outcome = reconcile(
        intent, transfers, token, now, price_now, lambda base_units, price: usd_cents_for(base_units, price, method)
    )
    for key, disposition in outcome.dispositions.items():
        transfer_rows[key].disposition = disposition
        session.add(transfer_rows[key])
    for credit in outcome.credits:
        credit_balance(tx, row.account_id, credit, row.id, now)
    for review in outcome.reviews:
        open_review(session, review.key, review.reason, now, row.id, row.account_id, review.transfer_key)
    if outcome.settles:
        row.settled_at = now
        if row.purpose == Purpose.ORDER:
            record_order_payment(session, row.amount_usd_cents, row.reference_id, f"order-payment:{row.id}", now)
            tx.emit(
                PaymentSettled(
                    payment_id=row.id,
                    order_id=row.reference_id,
                    account_id=row.account_id,
                    amount_usd_cents=row.amount_usd_cents,
                    method=f"{row.asset}/{row.network}",
                )
            )
        metrics.PAYMENTS_SETTLED.labels(row.asset, row.network, row.purpose).inc()
        log.info("payment settled", extra={"payment_id": row.id, "purpose": row.purpose})
    if outcome.status is not None and outcome.status != row.status:
        previous, row.status = row.status, outcome.status
        tx.emit(status_changed(row, previous, list(transfer_rows.values())))
    # Written even when nothing changed: the sweep takes the least recently reconciled first.
    row.updated_at = now
    session.add(row)


def credit_balance(tx: Tx, account_id: str, credit: Credit, ref: str, now: datetime) -> None:
    """Credit the balance once per key; BalanceCredited goes out with that first credit only."""
    if credit.reason == Reason.REFUSED_PAYMENT:  # back out of sales, where the payment was booked
        credited = refund_refused_payment(tx.session, account_id, credit.cents, ref, credit.key, now)
    else:
        credited = credit_customer(tx.session, account_id, credit.cents, Reason(credit.reason), credit.key, ref, now)
    if credited:
        tx.emit(BalanceCredited(account_id=account_id, amount_usd_cents=credit.cents, reason=credit.reason))
