"""Payments' units of work on plain objects (kernodeck_kit.memory), for its use cases (use_cases/: balance,
intake, instructions, copies, settlement, refunds, reviews, watchers, rates, methods)."""

from dataclasses import dataclass, field, replace
from datetime import datetime
from fractions import Fraction

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import ExtensionConfirmed, OrderCreated, OrderStatusChanged, WatcherStatus
from kernodeck_contracts.statuses import OrderStatus, PaymentStatus
from kernodeck_kit.memory import MemoryUnit
from kernodeck_kit.units import MemoryUnits
from kernodeck_payments.availability import MethodBoard
from kernodeck_payments.domain.extensions import PayableExtension
from kernodeck_payments.domain.intents import PaymentIntent, Purpose, RecordedTransfer, address_key
from kernodeck_payments.domain.methods import Method
from kernodeck_payments.domain.orders import PayableOrder, created_order
from kernodeck_payments.domain.reconcile import Credit
from kernodeck_payments.domain.reviews import ReviewItem
from kernodeck_payments.domain.topups import Topup
from kernodeck_payments.ledger.domain import refund_key
from kernodeck_payments.rates.domain import Rate
from kernodeck_payments.store.intents import OPEN


@dataclass
class BalanceTables:
    available: dict[str, int] = field(default_factory=dict)  # cents by account
    keys: set[str] = field(default_factory=set)  # the ledger's idempotency keys


class MemoryBalance(MemoryUnit[BalanceTables]):
    def debit_for_order(self, account_id: str, cents: int, order_id: str, key: str, at: datetime) -> bool:
        if key in self.tables.keys:
            return False
        if self.tables.available.get(account_id, 0) < cents:
            raise ServiceError(ErrorCode.INSUFFICIENT_BALANCE, "the available balance does not cover the order")
        self.tables.keys.add(key)
        self.tables.available[account_id] -= cents
        return True


def balance_units(**available: int) -> MemoryUnits:
    return MemoryUnits("payments", BalanceTables(dict(available)), MemoryBalance)


@dataclass
class IntakeTables:
    board: MethodBoard  # what the methods have right now, as a test sets it
    solana_pool: list[str] = field(default_factory=list)  # unused addresses, handed out first to last
    next_index: dict[str, int] = field(default_factory=dict)
    topups: dict[str, Topup] = field(default_factory=dict)
    intents: dict[str, PaymentIntent] = field(default_factory=dict)
    orders: dict[str, PayableOrder] = field(default_factory=dict)  # payments' copies, by order id
    extensions: dict[str, PayableExtension] = field(default_factory=dict)
    status_at: dict[str, datetime] = field(default_factory=dict)  # when each order copy's status was true


class MemoryIntake(MemoryUnit[IntakeTables]):
    def board(self, now: datetime) -> MethodBoard:
        return self.tables.board

    def open_intents(self, account_id: str, now: datetime) -> list[PaymentIntent]:
        return self.where(
            self.tables.intents,
            lambda row: (
                row.account_id == account_id
                and row.status in OPEN
                and (row.expires_at > now or row.status != PaymentStatus.AWAITING_TRANSFER)
            ),
        )

    def unfunded_issued_since(self, account_id: str, network: str, since: datetime) -> list[datetime]:
        """No transfer lives here: every address is unfunded."""
        mine = self.where(
            self.tables.intents,
            lambda row: row.account_id == account_id and row.network == network and row.created_at > since,
        )
        return sorted(row.created_at for row in mine)

    def take_index(self, network: str) -> int:
        index = self.tables.next_index.get(network, 0)
        self.tables.next_index[network] = index + 1
        return index

    def take_solana_address(self, intent_id: str) -> str | None:
        return self.tables.solana_pool.pop(0) if self.tables.solana_pool else None

    def solana_pool_left(self) -> int:
        return len(self.tables.solana_pool)

    def add_intent(self, intent: PaymentIntent) -> None:
        self.put(self.tables.intents, intent)

    def add_topup(self, topup: Topup) -> None:
        self.put(self.tables.topups, topup)

    def payable_order(self, order_id: str) -> PayableOrder | None:
        return self.read(self.tables.orders, order_id)

    def payable_extension(self, extension_id: str) -> PayableExtension | None:
        return self.read(self.tables.extensions, extension_id)

    def order_intents_expired_since(self, account_id: str, since: datetime, now: datetime) -> list[datetime]:
        expired = self.where(
            self.tables.intents,
            lambda row: (
                row.account_id == account_id
                and row.purpose == Purpose.ORDER
                and row.expires_at > since
                and (
                    row.status == PaymentStatus.EXPIRED
                    or (row.status == PaymentStatus.AWAITING_TRANSFER and row.expires_at <= now)
                )
            ),
        )
        return sorted(row.expires_at for row in expired)


def intake_units(
    board: MethodBoard, solana_pool: list[str] = (), *copies: PayableOrder | PayableExtension
) -> MemoryUnits:
    """Intake with `board` and `solana_pool`, and payments' `copies` of orders and extensions."""
    orders = {copy.order_id: copy for copy in copies if isinstance(copy, PayableOrder)}
    extensions = {copy.extension_id: copy for copy in copies if isinstance(copy, PayableExtension)}
    return MemoryUnits(
        "payments", IntakeTables(board, list(solana_pool), orders=orders, extensions=extensions), MemoryIntake
    )


class MemoryCopies(MemoryIntake):
    def remember_order(self, event: OrderCreated) -> None:
        known = self.tables.orders.get(event.order_id)
        status = known.status if known else OrderStatus.AWAITING_PAYMENT
        self.tables.status_at.setdefault(event.order_id, event.occurred_at)
        self.put(self.tables.orders, created_order(event, status), event.order_id)

    def record_order_statuses(self, events: list[OrderStatusChanged]) -> None:
        for event in sorted(events, key=lambda e: e.order_id):
            known = self.tables.orders.get(event.order_id)
            if known is None:
                self.put(
                    self.tables.orders,
                    PayableOrder(event.order_id, event.account_id, event.status, None),
                    event.order_id,
                )
            elif self.tables.status_at[event.order_id] <= event.occurred_at:
                self.put(self.tables.orders, replace(known, status=event.status), event.order_id)
            else:
                continue
            self.tables.status_at[event.order_id] = event.occurred_at

    def copy_extension(self, event: ExtensionConfirmed) -> None:
        copy = PayableExtension(
            event.extension_id, event.order_id, event.account_id, event.price_usd_cents, event.due_by
        )
        self.tables.extensions.setdefault(event.extension_id, copy)

    def mark_extension_paid(self, extension_id: str) -> None:
        known = self.tables.extensions.get(extension_id)
        if known is not None:
            self.tables.extensions[extension_id] = replace(known, paid=True)


def copies_units() -> MemoryUnits:
    return MemoryUnits("payments", IntakeTables(MethodBoard({}, {}, frozenset(), 0)), MemoryCopies)


@dataclass
class SettlementTables:
    intents: dict[str, PaymentIntent] = field(default_factory=dict)
    transfers: dict[tuple[str, str, int], RecordedTransfer] = field(default_factory=dict)
    prices: dict[str, Fraction | None] = field(default_factory=dict)  # the fresh rate of each symbol, as set
    balances: dict[str, int] = field(default_factory=dict)
    ledger: dict[str, tuple[str, int, str]] = field(default_factory=dict)  # key -> (account or sales, cents, reason)
    reviews: dict[str, tuple[str, str | None, str | None]] = field(default_factory=dict)  # key -> (reason, intent, tx)
    review_groups: dict[str, list[str | None]] = field(default_factory=dict)  # open group -> its transfers' keys


class MemorySettlement(MemoryUnit[SettlementTables]):
    def intent_at(self, network: str, address: str) -> PaymentIntent | None:
        key = address_key(network, address)
        return next(iter(self.where(self.tables.intents, lambda i: (i.network, i.address_key) == (network, key))), None)

    def intent(self, intent_id: str) -> PaymentIntent | None:
        return self.read(self.tables.intents, intent_id)

    def due(self, now: datetime, limit: int) -> list[str]:
        unused = {
            t.intent_id for t in self.tables.transfers.values() if t.state == "confirmed" and t.disposition is None
        }
        due = [
            i
            for i in self.tables.intents.values()
            if i.expires_at <= now < i.watch_until and (i.status in OPEN or i.id in unused)
        ]
        return [i.id for i in sorted(due, key=lambda i: i.updated_at)][:limit]

    def read_ahead(self, transfers) -> None:
        """Everything is in memory already."""

    def transfer(self, network: str, txid: str, index: int) -> RecordedTransfer | None:
        return self.read(self.tables.transfers, (network, txid, index))

    def transfers_of_many(self, intent_ids: list[str]) -> dict[str, list[RecordedTransfer]]:
        return {intent_id: self.transfers_of(intent_id) for intent_id in intent_ids}

    def transfers_of(self, intent_id: str) -> list[RecordedTransfer]:
        found = self.where(self.tables.transfers, lambda t: t.intent_id == intent_id)
        return sorted(found, key=lambda t: (t.first_seen_at, t.txid, t.index))

    def save_intent(self, intent: PaymentIntent) -> None:
        self.put(self.tables.intents, intent)

    def save_transfer(self, transfer: RecordedTransfer) -> None:
        self.put(self.tables.transfers, transfer, (transfer.network, transfer.txid, transfer.index))

    def price_now(self, symbol: str, now: datetime) -> Fraction | None:
        return self.tables.prices.get(symbol)

    def credit(self, account_id: str, credit: Credit, ref: str, now: datetime) -> bool:
        if credit.key in self.tables.ledger:
            return False
        self.tables.ledger[credit.key] = (account_id, credit.cents, credit.reason)
        self.tables.balances[account_id] = self.tables.balances.get(account_id, 0) + credit.cents
        return True

    def book_order_payment(self, cents: int, order_id: str, key: str, now: datetime) -> None:
        self.tables.ledger.setdefault(key, ("sales:orders", cents, "order_payment"))

    def open_review(self, key, reason, now, intent_id=None, account_id=None, transfer_key=None, group=None) -> bool:
        if key in self.tables.reviews:
            return False
        if group in self.tables.review_groups:  # joins the group's open item
            self.tables.review_groups[group].append(transfer_key)
            return False
        self.tables.reviews[key] = (reason, intent_id, transfer_key)
        if group is not None:
            self.tables.review_groups[group] = [transfer_key]
        return True


def settlement_units(*intents: PaymentIntent, **prices: Fraction | None) -> MemoryUnits:
    """Settlement over `intents`, with `prices` as each symbol's fresh rate (None: no fresh rate)."""
    return MemoryUnits("payments", SettlementTables({i.id: i for i in intents}, prices=dict(prices)), MemorySettlement)


@dataclass
class RefundTables(SettlementTables):
    sales: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # order -> (payment, cents) booked


class MemoryRefunds(MemorySettlement):
    def lock_order(self, order_id: str) -> None:
        """One unit at a time works on the tables: nothing to wait for."""

    def bookings(self, order_id: str) -> list[tuple[str, int]]:
        return list(self.tables.sales.get(order_id, []))

    def left_in_sales(self, order_id: str) -> int:
        booked = self.bookings(order_id)
        given_back = [self.tables.ledger.get(refund_key(payment_id)) for payment_id, _ in booked]
        return sum(cents for _, cents in booked) - sum(entry[1] for entry in given_back if entry is not None)

    def refunded(self, payment_ids: list[str]) -> set[str]:
        return {payment_id for payment_id in payment_ids if refund_key(payment_id) in self.tables.ledger}


def refund_units(**sales: list[tuple[str, int]]) -> MemoryUnits:
    """Refunds over `sales`: each order's payments booked into sales, (payment id, cents) oldest first."""
    return MemoryUnits("payments", RefundTables(sales=dict(sales)), MemoryRefunds)


@dataclass
class ReviewTables(SettlementTables):
    items: dict[str, ReviewItem] = field(default_factory=dict)
    decisions: list[tuple[str, str, str]] = field(default_factory=list)  # (item, actor, decision) of the audit


class MemoryReviews(MemorySettlement):
    def review(self, review_id: str) -> ReviewItem | None:
        return self.read(self.tables.items, review_id)

    def record_decision(self, item: ReviewItem) -> None:
        self.put(self.tables.items, item)
        self.tables.decisions.append((item.id, item.resolved_by, item.decision))


def review_units(*items: ReviewItem) -> MemoryUnits:
    return MemoryUnits("payments", ReviewTables(items={item.id: item for item in items}), MemoryReviews)


@dataclass
class WatchersTables:
    reports: dict[str, WatcherStatus] = field(default_factory=dict)  # each network's last report
    intents: dict[str, PaymentIntent] = field(default_factory=dict)
    reviews: dict[str, tuple[str, str | None, str | None]] = field(default_factory=dict)  # key -> (reason, intent, acc)


class MemoryWatchers(MemoryUnit[WatchersTables]):
    def record_watcher_status(self, event: WatcherStatus) -> None:
        known = self.tables.reports.get(event.network)
        if known is None or event.occurred_at > known.occurred_at:
            self.put(self.tables.reports, event, event.network)

    def owner_of(self, network: str, address: str) -> PaymentIntent | None:
        key = address_key(network, address)
        return next(iter(self.where(self.tables.intents, lambda i: (i.network, i.address_key) == (network, key))), None)

    def open_review(self, key, reason, now, intent_id=None, account_id=None) -> bool:
        if key in self.tables.reviews:
            return False
        self.tables.reviews[key] = (reason, intent_id, account_id)
        return True


def watchers_units(*intents: PaymentIntent) -> MemoryUnits:
    return MemoryUnits("payments", WatchersTables(intents={i.id: i for i in intents}), MemoryWatchers)


@dataclass
class RatesTables:
    observations: dict[tuple[str, str], Rate] = field(default_factory=dict)  # (symbol, source) -> newest


class MemoryRates(MemoryUnit[RatesTables]):
    def save_observations(self, rates) -> None:
        for rate in rates:
            kept = self.tables.observations.get((rate.symbol, rate.source))
            if kept is None or rate.as_of > kept.as_of:
                self.put(self.tables.observations, rate, (rate.symbol, rate.source))


def rates_units() -> MemoryUnits:
    return MemoryUnits("payments", RatesTables(), MemoryRates)


@dataclass
class MethodsTables:
    switches: dict[tuple[str, str], tuple[bool, str, datetime]] = field(default_factory=dict)  # -> (on, by, at)


class MemoryMethods(MemoryUnit[MethodsTables]):
    def set_switch(self, method: Method, enabled: bool, operator_id: str, now: datetime) -> None:
        self.tables.switches[(method.asset, method.network)] = (enabled, operator_id, now)


def methods_units() -> MemoryUnits:
    return MemoryUnits("payments", MethodsTables(), MemoryMethods)
