"""The orders service's nameko entrypoints: thin, over the domain and the store."""

import logging
from datetime import datetime, timedelta
from uuid import uuid4

from nameko.rpc import RpcProxy, rpc

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import (
    PaymentRefused,
    PaymentReported,
    PaymentSettled,
    ProvisioningFailed,
    ProvisioningStarted,
    RentalEnded,
    RentalEnding,
    RentalExtended,
    RentalReady,
)
from kernodeck_contracts.rpc import Quote
from kernodeck_kit.events import consumer
from kernodeck_kit.nameko_deps import Database, Instrumented, Settings
from kernodeck_kit.outbox import Tx
from kernodeck_kit.rpc_errors import call_service
from kernodeck_kit.timers import configured_timer
from kernodeck_kit.types import rfc3339, utcnow
from kernodeck_orders import store
from kernodeck_orders.config import OrdersSettings
from kernodeck_orders.domain import (
    PAYMENT_REPORTED,
    RENTAL_ENDING,
    RENTAL_EXTENDED,
    UNPAID_TIMEOUT,
    Order,
    OrderStatus,
    RentalDates,
    TimelineEntry,
    cancel_by_customer,
    check_delivery_wishes,
    follow_delivery,
    is_due_for_cancellation,
    new_order,
    note,
    summary_of,
    transition,
)
from kernodeck_orders.events import order_created, status_changed
from kernodeck_orders.views import order_view

log = logging.getLogger(__name__)

SWEEP_BATCH = 500


class OrdersService:
    name = "orders"

    db = Database()
    instrumented = Instrumented()
    settings = Settings(OrdersSettings)
    catalog = RpcProxy("catalog")

    @rpc
    def health(self) -> dict:
        return {"service": self.name}

    @rpc(expected_exceptions=ServiceError)
    def create_order(
        self, account_id, model, duration_days, lots, preparation, ssh_public_key=None, preparation_note=None
    ) -> dict:
        key, description = check_delivery_wishes(preparation, ssh_public_key, preparation_note)
        quote = self._quote(model, duration_days, lots, preparation)
        if not quote.available:
            raise ServiceError(
                ErrorCode.OUT_OF_CAPACITY, f"{quote.model_name} has fewer than {lots} lots free right now"
            )
        order = new_order(uuid4().hex, account_id, summary_of(quote), utcnow(), key, description)
        with self.db.transaction() as tx:
            store.add_order(tx.session, order)
            tx.emit(order_created(order))
        return order_view(order)

    @rpc(expected_exceptions=ServiceError)
    def list_orders(self, account_id) -> list[dict]:
        with self.db.read() as session:
            return [order_view(order) for order in store.list_orders(session, account_id)]

    @rpc(expected_exceptions=ServiceError)
    def get_order(self, account_id, order_id) -> dict:
        with self.db.read() as session:
            return order_view(_owned(store.get_order(session, order_id), account_id))

    @rpc(expected_exceptions=ServiceError)
    def cancel_order(self, account_id, order_id) -> dict:
        with self.db.transaction() as tx:
            order = _owned(store.get_order(tx.session, order_id), account_id)
            previous = order.status
            _record(tx, order, previous, cancel_by_customer(order, utcnow()))
        return order_view(order)

    @configured_timer(OrdersSettings, "sweep_interval_s")
    def cancel_unpaid_orders(self) -> int:
        """Cancel the orders left unpaid past the TTL; returns how many."""
        now = utcnow()
        ttl = self.settings.unpaid_ttl
        with self.db.read() as session:
            candidates = store.unpaid_order_ids(session, created_before=now - ttl, limit=SWEEP_BATCH)
        return sum(self._cancel_if_unpaid(order_id, now, ttl) for order_id in candidates)

    def _cancel_if_unpaid(self, order_id: str, now: datetime, ttl: timedelta) -> bool:
        try:
            with self.db.transaction() as tx:
                order = store.get_order(tx.session, order_id)
                if not is_due_for_cancellation(order, now, ttl):
                    return False
                previous = order.status
                _record(tx, order, previous, transition(order, OrderStatus.CANCELLED, now, UNPAID_TIMEOUT))
        except ServiceError:
            log.info("order moved while the sweep cancelled it; left as it is", extra={"order_id": order_id})
            return False
        log.info("unpaid order cancelled", extra={"order_id": order_id})
        return True

    @consumer(PaymentSettled.source, PaymentSettled.type)
    def on_payment_settled(self, payload) -> None:
        """A settled payment makes its order paid; one the order cannot take goes back as refused."""
        event = PaymentSettled.from_message(payload)
        with self.db.consume("payments.payment_settled", event) as tx:
            if tx is None:
                return
            order = store.get_order(tx.session, event.order_id)
            if order is None or order.account_id != event.account_id:
                _refuse(tx, event, "unknown_order")
            elif order.status != OrderStatus.AWAITING_PAYMENT:
                _refuse(tx, event, f"order_{order.status.value}")
            else:
                previous = order.status
                _record(tx, order, previous, transition(order, OrderStatus.PAID, utcnow(), f"paid: {event.method}"))

    @consumer(PaymentReported.source, PaymentReported.type)
    def on_payment_reported(self, payload) -> None:
        event = PaymentReported.from_message(payload)
        if event.order_id is None:
            return
        with self.db.consume("payments.payment_reported", event) as tx:
            order = store.get_order(tx.session, event.order_id) if tx is not None else None
            if order is not None and order.account_id == event.account_id:
                entry = note(order, utcnow(), PAYMENT_REPORTED, f"the customer reports paying with {event.network}")
                store.add_note(tx.session, order, entry)

    # --- provisioning reports the delivery ------------------------------------------

    @consumer(ProvisioningStarted.source, ProvisioningStarted.type)
    def on_provisioning_started(self, payload) -> None:
        event = ProvisioningStarted.from_message(payload)
        self._follow(event, OrderStatus.PROVISIONING, "the node is being prepared")

    @consumer(RentalReady.source, RentalReady.type)
    def on_rental_ready(self, payload) -> None:
        event = RentalReady.from_message(payload)
        dates = RentalDates(event.delivered_at, event.starts_at, event.ends_at)
        self._follow(event, OrderStatus.READY, f"delivered; the term ends {rfc3339(event.ends_at)}", dates)

    @consumer(ProvisioningFailed.source, ProvisioningFailed.type)
    def on_provisioning_failed(self, payload) -> None:
        event = ProvisioningFailed.from_message(payload)
        self._follow(event, OrderStatus.FAILED, f"{event.reason}; the payment is refunded to the balance")

    @consumer(RentalEnded.source, RentalEnded.type)
    def on_rental_ended(self, payload) -> None:
        event = RentalEnded.from_message(payload)
        self._follow(event, OrderStatus.ENDED, "the node was reclaimed and wiped")

    @consumer(RentalEnding.source, RentalEnding.type)
    def on_rental_ending(self, payload) -> None:
        event = RentalEnding.from_message(payload)
        detail = f"the rental ends in {event.hours_left} h ({rfc3339(event.ends_at)}): export your results now"
        self._note(event, RENTAL_ENDING, detail)

    @consumer(RentalExtended.source, RentalExtended.type)
    def on_rental_extended(self, payload) -> None:
        event = RentalExtended.from_message(payload)
        with self.db.consume("provisioning.rental_extended", event) as tx:
            order = store.get_order(tx.session, event.order_id) if tx is not None else None
            if order is None or order.rental is None:
                return
            order.rental.ends_at = event.ends_at
            store.save_rental(tx.session, order)
            entry = note(order, utcnow(), RENTAL_EXTENDED, f"the term now ends {rfc3339(event.ends_at)}")
            store.add_note(tx.session, order, entry)

    def _follow(self, event, target: OrderStatus, reason: str, dates: RentalDates | None = None) -> None:
        with self.db.consume(f"provisioning.{event.type}", event) as tx:
            order = store.get_order(tx.session, event.order_id) if tx is not None else None
            if order is None:
                return
            if order.status == OrderStatus.AWAITING_PAYMENT:
                raise OrderNotPaidYet(event.order_id)  # orders' own `paid` is still being applied: retried
            previous = order.status
            for entry in follow_delivery(order, target, utcnow(), reason):
                _record(tx, order, previous, entry)
                previous = order.status
            if dates is not None and order.rental is None:
                order.rental = dates
                store.save_rental(tx.session, order)

    def _note(self, event, kind: str, detail: str) -> None:
        with self.db.consume(f"provisioning.{event.type}", event) as tx:
            order = store.get_order(tx.session, event.order_id) if tx is not None else None
            if order is not None:
                store.add_note(tx.session, order, note(order, utcnow(), kind, detail))

    def _quote(self, model, duration_days, lots, preparation) -> Quote:
        return Quote.model_validate(call_service(self.catalog.quote, model, duration_days, lots, preparation))


class OrderNotPaidYet(Exception):
    """A delivery event came before the order's own `paid`: the event is retried after a pause."""


def _owned(order: Order | None, account_id: str) -> Order:
    # Another account's order gets the same answer as a missing one: its existence is not revealed.
    if order is None or order.account_id != account_id:
        raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
    return order


def _refuse(tx: Tx, event: PaymentSettled, reason: str) -> None:
    log.warning(
        "settled payment refused", extra={"order_id": event.order_id, "payment_id": event.payment_id, "reason": reason}
    )
    tx.emit(
        PaymentRefused(
            order_id=event.order_id,
            account_id=event.account_id,
            payment_id=event.payment_id,
            amount_usd_cents=event.amount_usd_cents,
            reason=reason,
        )
    )


def _record(tx: Tx, order: Order, previous: OrderStatus, entry: TimelineEntry) -> None:
    """Save a status change made on `order` unless another worker changed it meanwhile, and announce it."""
    try:
        store.save_transition(tx.session, order, entry)
    except store.StaleOrder:
        raise ServiceError(ErrorCode.INVALID_STATE, "the order changed meanwhile; reload it") from None
    tx.emit(status_changed(order, previous, entry.detail))
