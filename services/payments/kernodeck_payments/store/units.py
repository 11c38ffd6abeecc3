"""Payments' SQL units of work: what each family of use cases (use_cases/) reads and changes, on one database
transaction of the service's store."""

from collections.abc import Sequence
from datetime import datetime
from fractions import Fraction

from kernodeck_contracts.events import (
    ChainTransfer,
    ExtensionConfirmed,
    OrderCreated,
    OrderStatusChanged,
    WatcherStatus,
)
from kernodeck_kit.db import lock_key
from kernodeck_kit.outbox import Tx
from kernodeck_kit.rows import copy_as
from kernodeck_kit.units import SqlUnit
from kernodeck_payments.availability import MethodBoard, current_price, load_board, record_watcher_status
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.extensions import PayableExtension
from kernodeck_payments.domain.intents import PaymentIntent, RecordedTransfer, address_key
from kernodeck_payments.domain.methods import Method
from kernodeck_payments.domain.orders import PayableOrder
from kernodeck_payments.domain.reconcile import Credit
from kernodeck_payments.domain.reviews import ReviewItem
from kernodeck_payments.domain.topups import Topup
from kernodeck_payments.ledger.domain import Reason, refund_key
from kernodeck_payments.ledger.store import (
    booked_under,
    credit_customer,
    debit_customer_for_order,
    order_bookings,
    paid_for_order,
    record_order_payments,
    refund_refused_payment,
)
from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.rates.store import save_observations
from kernodeck_payments.store import write_onto
from kernodeck_payments.store.addresses import (
    solana_pool_left,
    take_index,
    take_solana_address,
    unfunded_issued_since,
)
from kernodeck_payments.store.extensions import copy_extension, mark_extension_paid, payable_extension
from kernodeck_payments.store.intents import (
    add_intent,
    due_for_reconciliation,
    get_intent,
    get_transfer,
    intent_at,
    intent_of,
    intents_at,
    open_intents_of,
    order_intent_ids,
    order_intents_expired_since,
    transfer_of,
    transfers_by_intent,
    transfers_in,
    transfers_of,
)
from kernodeck_payments.store.orders import payable_order, record_order_statuses, remember_order
from kernodeck_payments.store.reviews import get_review, open_review, record_decision, review_of
from kernodeck_payments.store.tables import ChainTransferRow, MethodSwitch, PaymentIntentRow, ReviewItemRow, TopupRow

ORDER_LOCKS = 71  # the advisory lock namespace of payments' order refunds


class SqlBalance(SqlUnit):
    def debit_for_order(self, account_id: str, cents: int, order_id: str, key: str, at: datetime) -> bool:
        return debit_customer_for_order(self.session, account_id, cents, order_id, key, at)


class SqlCopies(SqlUnit):
    def remember_order(self, event: OrderCreated) -> None:
        remember_order(self.session, event)

    def record_order_statuses(self, events: list[OrderStatusChanged]) -> None:
        record_order_statuses(self.session, events)

    def copy_extension(self, event: ExtensionConfirmed) -> None:
        copy_extension(self.session, event)

    def mark_extension_paid(self, extension_id: str) -> None:
        mark_extension_paid(self.session, extension_id)


class SqlIntake(SqlUnit):
    def __init__(self, tx: Tx, settings: PaymentsSettings):
        super().__init__(tx)
        self.settings = settings

    def board(self, now: datetime) -> MethodBoard:
        return load_board(self.session, self.settings, now)

    def open_intents(self, account_id: str, now: datetime) -> list[PaymentIntent]:
        return [intent_of(row) for row in open_intents_of(self.session, account_id, now)]

    def unfunded_issued_since(self, account_id: str, network: str, since: datetime) -> list[datetime]:
        return unfunded_issued_since(self.session, account_id, network, since)

    def take_index(self, network: str) -> int:
        return take_index(self.session, network)

    def take_solana_address(self, intent_id: str) -> str | None:
        return take_solana_address(self.session, intent_id)

    def solana_pool_left(self) -> int:
        return solana_pool_left(self.session)

    def add_intent(self, intent: PaymentIntent) -> None:
        add_intent(self.session, intent)

    def add_topup(self, topup: Topup) -> None:
        self.session.add(copy_as(TopupRow, topup))

    def payable_order(self, order_id: str) -> PayableOrder | None:
        return payable_order(self.session, order_id)

    def payable_extension(self, extension_id: str) -> PayableExtension | None:
        return payable_extension(self.session, extension_id)

    def order_intents_expired_since(self, account_id: str, since: datetime, now: datetime) -> list[datetime]:
        return order_intents_expired_since(self.session, account_id, since, now)


class SqlSettlement(SqlUnit):
    """Settlement's unit: the rows it read, kept by key, take back the values the use cases save."""

    def __init__(self, tx: Tx, settings: PaymentsSettings):
        super().__init__(tx)
        self.settings = settings
        self._owners: dict[tuple[str, str], PaymentIntentRow | None] = {}  # by (network, address key), read ahead
        self._intents: dict[str, PaymentIntentRow] = {}  # every intent row read, by id
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
        return self._intent(self._owners[key])

    def intent(self, intent_id: str) -> PaymentIntent | None:
        return self._intent(get_intent(self.session, intent_id, lock=True))

    def _intent(self, row: PaymentIntentRow | None) -> PaymentIntent | None:
        if row is None:
            return None
        self._intents[row.id] = row
        return intent_of(row)

    def due(self, now: datetime, limit: int) -> list[str]:
        return due_for_reconciliation(self.session, now, limit)

    def transfer(self, network: str, txid: str, index: int) -> RecordedTransfer | None:
        key = (network, txid, index)
        if key not in self._transfers:
            self._transfers[key] = get_transfer(self.session, network, txid, index)
        row = self._transfers[key]
        return None if row is None else transfer_of(row)

    def transfers_of(self, intent_id: str) -> list[RecordedTransfer]:
        return [self._transfer(row) for row in transfers_of(self.session, intent_id)]

    def transfers_of_many(self, intent_ids: list[str]) -> dict[str, list[RecordedTransfer]]:
        found = transfers_by_intent(self.session, intent_ids)
        return {intent_id: [self._transfer(row) for row in rows] for intent_id, rows in found.items()}

    def _transfer(self, row: ChainTransferRow) -> RecordedTransfer:
        self._transfers[(row.network, row.txid, row.index)] = row
        return transfer_of(row)

    # Rows changed or added are flushed with the next query or the commit: what the unit reads next sees them.
    def save_intent(self, intent: PaymentIntent) -> None:
        write_onto(self._intents[intent.id], intent)

    def save_transfer(self, transfer: RecordedTransfer) -> None:
        key = (transfer.network, transfer.txid, transfer.index)
        row = self._transfers.get(key)
        if row is None:
            row = self._transfers[key] = copy_as(ChainTransferRow, transfer)
            self.session.add(row)
        else:
            write_onto(row, transfer)

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


class SqlMethods(SqlUnit):
    def set_switch(self, method: Method, enabled: bool, operator_id: str, now: datetime) -> None:
        row = self.session.get(MethodSwitch, (method.asset, method.network)) or MethodSwitch(
            asset=method.asset, network=method.network, enabled=enabled, updated_by=operator_id, updated_at=now
        )
        row.enabled, row.updated_by, row.updated_at = enabled, operator_id, now
        self.session.add(row)


class SqlRates(SqlUnit):
    def save_observations(self, rates: Sequence[Rate]) -> None:
        save_observations(self.session, rates)


class SqlWatchers(SqlUnit):
    def record_watcher_status(self, event: WatcherStatus) -> None:
        record_watcher_status(self.session, event)

    def owner_of(self, network: str, address: str) -> PaymentIntent | None:
        row = intent_at(self.session, network, address)
        return None if row is None else intent_of(row)

    def open_review(self, key, reason, now, intent_id=None, account_id=None) -> bool:
        return open_review(self.session, key, reason, now, intent_id, account_id)


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


class SqlReviews(SqlSettlement):
    def __init__(self, tx: Tx, settings: PaymentsSettings):
        super().__init__(tx, settings)
        self._reviews: dict[str, ReviewItemRow] = {}  # the rows read, by id

    def review(self, review_id: str) -> ReviewItem | None:
        row = get_review(self.session, review_id, lock=True)
        if row is None:
            return None
        self._reviews[row.id] = row
        return review_of(row)

    def record_decision(self, item: ReviewItem) -> None:
        record_decision(self.session, self._reviews[item.id], item)
