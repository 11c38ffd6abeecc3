"""Chain events in, decisions out: record transfers, reconcile intents, apply the outcome, on a unit of work
(the database's in the service, plain objects in tests)."""

import logging
from datetime import datetime
from fractions import Fraction
from functools import cache
from typing import Protocol

from sqlmodel import SQLModel

from kernodeck_contracts.events import BalanceCredited, ChainTransfer, Event, PaymentSettled
from kernodeck_contracts.statuses import TransferStatus
from kernodeck_kit.outbox import Tx
from kernodeck_kit.units import SqlUnit, Units
from kernodeck_payments import metrics
from kernodeck_payments.availability import current_price
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.amounts import usd_cents_for
from kernodeck_payments.domain.intents import Purpose, address_key, normalize_token, transfer_key
from kernodeck_payments.domain.methods import find_method
from kernodeck_payments.domain.reconcile import Credit, reconcile
from kernodeck_payments.ledger.domain import Reason
from kernodeck_payments.ledger.store import credit_customer, record_order_payments, refund_refused_payment
from kernodeck_payments.store.intents import (
    as_intent,
    as_transfer,
    due_for_reconciliation,
    get_intent,
    get_transfer,
    intent_at,
    intents_at,
    transfers_by_intent,
    transfers_in,
    transfers_of,
)
from kernodeck_payments.store.reviews import open_review
from kernodeck_payments.store.tables import ChainTransferRow, PaymentIntent
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

    def transfer(self, network: str, txid: str, index: int) -> ChainTransferRow | None: ...
    def transfers_of(self, intent_id: str) -> list[ChainTransferRow]: ...
    def transfers_of_many(self, intent_ids: list[str]) -> dict[str, list[ChainTransferRow]]: ...

    def save(self, row: SQLModel) -> None:
        """Keep `row` (new or changed); what the unit reads next sees it."""

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


class SqlSettlement(SqlUnit):
    def __init__(self, tx: Tx, settings: PaymentsSettings):
        super().__init__(tx)
        self.settings = settings
        self._owners: dict[tuple[str, str], PaymentIntent | None] = {}  # by (network, address key), read ahead
        self._transfers: dict[tuple[str, str, int], ChainTransferRow | None] = {}  # None: known not to exist
        self._bookings: list[tuple[int, str, str, datetime]] = []  # order payments, booked together at the end

    def read_ahead(self, transfers: list[ChainTransfer]) -> None:
        networks = sorted({t.network for t in transfers})
        for network in networks:  # the intents first, as every other unit locks them before their transfers
            keys = {address_key(network, t.address) for t in transfers if t.network == network}
            owners = intents_at(self.session, network, keys, lock=True)
            self._owners.update({(network, key): owners.get(key) for key in keys})
        for network in networks:
            wanted = {(network, t.txid, t.index) for t in transfers if t.network == network}
            found = transfers_in(self.session, network, {txid for _, txid, _ in wanted}, lock=True)
            self._transfers.update(dict.fromkeys(wanted))
            self._transfers.update({(row.network, row.txid, row.index): row for row in found})

    def intent_at(self, network: str, address: str) -> PaymentIntent | None:
        key = (network, address_key(network, address))
        if key not in self._owners:
            self._owners[key] = intent_at(self.session, network, address, lock=True)
        return self._owners[key]

    def intent(self, intent_id: str) -> PaymentIntent | None:
        return get_intent(self.session, intent_id, lock=True)

    def due(self, now: datetime, limit: int) -> list[str]:
        return due_for_reconciliation(self.session, now, limit)

    def transfer(self, network: str, txid: str, index: int) -> ChainTransferRow | None:
        key = (network, txid, index)
        if key in self._transfers:
            return self._transfers[key]
        return get_transfer(self.session, network, txid, index)

    def transfers_of(self, intent_id: str) -> list[ChainTransferRow]:
        return transfers_of(self.session, intent_id)

    def transfers_of_many(self, intent_ids: list[str]) -> dict[str, list[ChainTransferRow]]:
        return transfers_by_intent(self.session, intent_ids)

    def save(self, row: SQLModel) -> None:
        # Flushed with the next query or the commit: what the unit reads next sees it all the same.
        self.session.add(row)
        if isinstance(row, ChainTransferRow):
            self._transfers[(row.network, row.txid, row.index)] = row

    def price_now(self, symbol: str, now: datetime) -> Fraction | None:
        return current_price(self.session, self.settings, symbol, now)

    # The ledger's statements touch none of the unit's pending rows: they need not flush them first, one
    # statement per intent where the unit's own changes go out together at its end.
    def credit(self, account_id: str, credit: Credit, ref: str, now: datetime) -> bool:
        with self.session.no_autoflush:
            if credit.reason == Reason.REFUSED_PAYMENT:  # back out of sales, where the payment was booked
                return refund_refused_payment(self.session, account_id, credit.cents, ref, credit.key, now)
            reason = Reason(credit.reason)
            return credit_customer(self.session, account_id, credit.cents, reason, credit.key, ref, now)

    def book_order_payment(self, cents: int, order_id: str, key: str, now: datetime) -> None:
        self._bookings.append((cents, order_id, key, now))

    def done(self) -> None:
        with self.session.no_autoflush:
            record_order_payments(self.session, self._bookings)

    def open_review(self, key, reason, now, intent_id=None, account_id=None, transfer_key=None, group=None) -> bool:
        return open_review(self.session, key, reason, now, intent_id, account_id, transfer_key, group)


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
    row = unit.transfer(event.network, event.txid, event.index)
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
            epoch=event.epoch,
            first_seen_at=min(event.occurred_at, now),
            updated_at=now,
        )
    elif (event.epoch, event.sequence) <= (row.epoch, row.sequence):  # a new watcher database: a later epoch
        return None
    else:
        row.first_seen_at = min(row.first_seen_at, event.occurred_at)
    # A transfer first seen before an intent owned its address stays unattributed.
    intent = owner if owner is not None and row.intent_id == owner.id else None
    required = intent.required_confirmations if intent else 1
    if state == TransferStatus.CONFIRMED and event.confirmations < required:
        state = TransferStatus.CONFIRMING  # the watcher's threshold is not ours: count again
    row.token = normalize_token(event.network, event.token)
    row.amount, row.state, row.sequence, row.epoch = event.amount, state, event.sequence, event.epoch
    row.confirmations, row.block_height, row.block_hash = event.confirmations, event.block_height, event.block_hash
    row.updated_at = now
    unit.save(row)
    if row.intent_id is None and state == TransferStatus.CONFIRMED:
        key = transfer_key(event.network, event.txid, event.index)
        unit.open_review(f"unknown_address:{key}", "unknown_address", now, transfer_key=key)
    return intent


def reconcile_intent(
    unit: SettlementUnit, row: PaymentIntent, now: datetime, transfers: list[ChainTransferRow] | None = None
) -> None:
    """Bring one intent, locked by the caller, up to date with its transfers (read here unless given), exactly
    once per cause."""
    method = find_method(row.asset, row.network)
    if transfers is None:
        transfers = unit.transfers_of(row.id)
    transfer_rows = {transfer_key(t.network, t.txid, t.index): t for t in transfers}
    outcome = reconcile(
        as_intent(row),
        [as_transfer(t) for t in transfer_rows.values()],
        normalize_token(row.network, row.token),
        now,
        cache(lambda: unit.price_now(method.rate_symbol, now)),
        lambda base_units, price: usd_cents_for(base_units, price, method),
    )
    for key, disposition in outcome.dispositions.items():
        transfer_rows[key].disposition = disposition
        unit.save(transfer_rows[key])
    for credit in outcome.credits:
        credit_balance(unit, row.account_id, credit, row.id, now)
    for review in outcome.reviews:
        unit.open_review(review.key, review.reason, now, row.id, row.account_id, review.transfer_key, review.group)
    if outcome.settles:
        row.settled_at = now
        if row.purpose in (Purpose.ORDER, Purpose.EXTENSION):
            unit.book_order_payment(row.amount_usd_cents, row.reference_id, f"{row.purpose}-payment:{row.id}", now)
            extension = row.purpose == Purpose.EXTENSION
            unit.emit(
                PaymentSettled(
                    payment_id=row.id,
                    order_id=row.order_id if extension else row.reference_id,
                    extension_id=row.reference_id if extension else None,
                    account_id=row.account_id,
                    amount_usd_cents=row.amount_usd_cents,
                    method=f"{row.asset}/{row.network}",
                )
            )
        metrics.PAYMENTS_SETTLED.labels(row.asset, row.network, row.purpose).inc()
        log.info("payment settled", extra={"payment_id": row.id, "purpose": row.purpose})
    if outcome.status is not None and outcome.status != row.status:
        previous, row.status = row.status, outcome.status
        unit.emit(status_changed(row, previous, list(transfer_rows.values())))
    # Written even when nothing changed: the sweep takes the least recently reconciled first.
    row.updated_at = now
    unit.save(row)


def credit_balance(unit: SettlementUnit, account_id: str, credit: Credit, ref: str, now: datetime) -> None:
    """Credit the balance once per key; BalanceCredited goes out with that first credit only."""
    if unit.credit(account_id, credit, ref, now):
        unit.emit(BalanceCredited(account_id=account_id, amount_usd_cents=credit.cents, reason=credit.reason))
