"""Chain events in, decisions out: record transfers, reconcile intents, apply the outcome, on a unit of work
(the database's in the service, plain objects in tests)."""

import logging
from dataclasses import replace
from datetime import datetime
from fractions import Fraction
from functools import cache
from typing import Protocol

from kernodeck_contracts.events import BalanceCredited, ChainTransfer, Event, PaymentSettled
from kernodeck_contracts.statuses import TransferStatus
from kernodeck_kit.units import Units
from kernodeck_payments import metrics
from kernodeck_payments.domain.amounts import usd_cents_for
from kernodeck_payments.domain.intents import PaymentIntent, Purpose, RecordedTransfer, normalize_token, transfer_key
from kernodeck_payments.domain.methods import find_method
from kernodeck_payments.domain.reconcile import Credit, reconcile
from kernodeck_payments.tracking import status_changed

log = logging.getLogger(__name__)


class SettlementUnit(Protocol):
    def intent_at(self, network: str, address: str) -> PaymentIntent | None:
        """The intent that owns the address, locked until the unit ends."""

    def intent(self, intent_id: str) -> PaymentIntent | None:
        """The intent, locked until the unit ends."""

    def due(self, now: datetime, limit: int) -> list[str]:
        """Intents past their deadline with something left to decide, least recently reconciled first."""

    def read_ahead(self, transfers: list[ChainTransfer]) -> None:
        """Read what these transfers touch at once: the intents owning their addresses, locked, then the
        transfers, each in one order whatever the batch's, so that `intent_at` and `transfer` answer from memory
        and batches applied together never wait for each other in a circle."""

    def transfer(self, network: str, txid: str, index: int) -> RecordedTransfer | None: ...
    def transfers_of(self, intent_id: str) -> list[RecordedTransfer]: ...
    def transfers_of_many(self, intent_ids: list[str]) -> dict[str, list[RecordedTransfer]]: ...

    def save_intent(self, intent: PaymentIntent) -> None:
        """Keep the intent as it is now (one the unit read); what the unit reads next sees it."""

    def save_transfer(self, transfer: RecordedTransfer) -> None:
        """Keep the transfer (new, or one the unit read) as it is now; what the unit reads next sees it."""

    def price_now(self, symbol: str, now: datetime) -> Fraction | None:
        """A fresh rate of `symbol`; None when there is none (or a stablecoin is off its peg)."""

    def credit(self, account_id: str, credit: Credit, ref: str, now: datetime) -> bool:
        """Credit the balance once per `credit.key`; False when that key was credited before."""

    def book_order_payment(self, cents: int, order_id: str, key: str, now: datetime) -> None:
        """An order paid straight by crypto, into sales, once per key."""

    def open_review(
        self,
        key: str,
        reason: str,
        now: datetime,
        intent_id: str | None = None,
        account_id: str | None = None,
        transfer_key: str | None = None,
        group: str | None = None,
    ) -> bool:
        """Queue an item for an operator unless one with the same key exists, or join its group's open item."""

    def emit(self, event: Event) -> None: ...


def apply_transfers(
    units: Units[SettlementUnit],
    events: list[tuple[ChainTransfer, TransferStatus]],
    now: datetime,
) -> None:
    """A watcher's events that came together (a block's transfers), in one unit, each applied once: every
    transfer recorded in its network's order (epoch, sequence), then each intent they touched brought up to
    date once.

    A failure anywhere leaves the whole batch unapplied, to be applied again whole.
    """
    state_of = {event.event_id: state for event, state in events}
    with units.consume_each([event for event, _ in events]) as (unit, fresh):
        unit.read_ahead(fresh)
        touched: dict[str, PaymentIntent] = {}
        for event in sorted(fresh, key=lambda event: (event.network, event.epoch, event.sequence)):
            intent = record_transfer(unit, event, state_of[event.event_id], now)
            if intent is not None:
                touched[intent.id] = intent
        transfers = unit.transfers_of_many(list(touched))
        for intent in touched.values():
            reconcile_intent(unit, intent, now, transfers[intent.id])


def sweep(units: Units[SettlementUnit], now: datetime, batch: int) -> int:
    """Reconcile the intents whose deadline passed with something left to decide; how many were looked at."""
    with units.transaction() as unit:
        due = unit.due(now, batch)
    for intent_id in due:
        with units.transaction() as unit:
            reconcile_intent(unit, unit.intent(intent_id), now)
    return len(due)


def record_transfer(
    unit: SettlementUnit, event: ChainTransfer, state: TransferStatus, now: datetime
) -> PaymentIntent | None:
    """Store what the watcher saw; returns the intent to reconcile, locked, or None when nothing changed.

    Every transfer is kept, even on an address no intent owns (then it goes
    to review once confirmed). An event older than the last one applied, by (epoch, sequence), is ignored.
    """
    # The owner is locked before its transfer is read: events on one intent
    # apply one at a time, each reading what the one before it wrote.
    owner = unit.intent_at(event.network, event.address)
    known = unit.transfer(event.network, event.txid, event.index)
    if known is None:
        address, intent_id, disposition = event.address, owner.id if owner else None, None
        first_seen_at = min(event.occurred_at, now)
    elif (event.epoch, event.sequence) <= (known.epoch, known.sequence):  # a new watcher database: a later epoch
        return None
    else:
        address, intent_id, disposition = known.address, known.intent_id, known.disposition
        first_seen_at = min(known.first_seen_at, event.occurred_at)
    # A transfer first seen before an intent owned its address stays unattributed.
    intent = owner if owner is not None and intent_id == owner.id else None
    required = intent.required_confirmations if intent else 1
    if state == TransferStatus.CONFIRMED and event.confirmations < required:
        state = TransferStatus.CONFIRMING  # the watcher's threshold is not ours: count again
    unit.save_transfer(
        RecordedTransfer(
            network=event.network,
            txid=event.txid,
            index=event.index,
            address=address,
            intent_id=intent_id,
            token=normalize_token(event.network, event.token),
            amount=event.amount,
            confirmations=event.confirmations,
            state=state,
            sequence=event.sequence,
            epoch=event.epoch,
            block_height=event.block_height,
            block_hash=event.block_hash,
            disposition=disposition,
            first_seen_at=first_seen_at,
            updated_at=now,
        )
    )
    if intent_id is None and state == TransferStatus.CONFIRMED:
        key = transfer_key(event.network, event.txid, event.index)
        unit.open_review(f"unknown_address:{key}", "unknown_address", now, transfer_key=key)
    return intent


def reconcile_intent(
    unit: SettlementUnit, intent: PaymentIntent, now: datetime, transfers: list[RecordedTransfer] | None = None
) -> None:
    """Bring one intent, locked by the caller, up to date with its transfers (read here unless given), exactly
    once per cause."""
    method = find_method(intent.asset, intent.network)
    if transfers is None:
        transfers = unit.transfers_of(intent.id)
    by_key = {transfer_key(t.network, t.txid, t.index): t for t in transfers}
    outcome = reconcile(
        intent.facts(),
        [t.facts() for t in by_key.values()],
        normalize_token(intent.network, intent.token),
        now,
        cache(lambda: unit.price_now(method.rate_symbol, now)),
        lambda base_units, price: usd_cents_for(base_units, price, method),
    )
    for key, disposition in outcome.dispositions.items():
        by_key[key] = replace(by_key[key], disposition=disposition)
        unit.save_transfer(by_key[key])
    for credit in outcome.credits:
        credit_balance(unit, intent.account_id, credit, intent.id, now)
    for review in outcome.reviews:
        unit.open_review(
            review.key, review.reason, now, intent.id, intent.account_id, review.transfer_key, review.group
        )
    if outcome.settles:
        intent = replace(intent, settled_at=now)
        _settled(unit, intent, now)
    if outcome.status is not None and outcome.status != intent.status:
        previous, intent = intent.status, replace(intent, status=outcome.status)
        unit.emit(status_changed(intent, previous, list(by_key.values())))
    # Written even when nothing changed: the sweep takes the least recently reconciled first.
    unit.save_intent(replace(intent, updated_at=now))


def _settled(unit: SettlementUnit, intent: PaymentIntent, now: datetime) -> None:
    """What an intent's settlement books and tells: an order's or an extension's payment, into sales."""
    if intent.purpose in (Purpose.ORDER, Purpose.EXTENSION):
        key = f"{intent.purpose}-payment:{intent.id}"
        unit.book_order_payment(intent.amount_usd_cents, intent.reference_id, key, now)
        extension = intent.purpose == Purpose.EXTENSION
        unit.emit(
            PaymentSettled(
                payment_id=intent.id,
                order_id=intent.order_id if extension else intent.reference_id,
                extension_id=intent.reference_id if extension else None,
                account_id=intent.account_id,
                amount_usd_cents=intent.amount_usd_cents,
                method=f"{intent.asset}/{intent.network}",
            )
        )
    metrics.PAYMENTS_SETTLED.labels(intent.asset, intent.network, intent.purpose).inc()
    log.info("payment settled", extra={"payment_id": intent.id, "purpose": intent.purpose})


def credit_balance(unit: SettlementUnit, account_id: str, credit: Credit, ref: str, now: datetime) -> None:
    """Credit the balance once per key; BalanceCredited goes out with that first credit only."""
    if unit.credit(account_id, credit, ref, now):
        unit.emit(BalanceCredited(account_id=account_id, amount_usd_cents=credit.cents, reason=credit.reason))
