"""The orders service's nameko entrypoints: thin, over the use cases."""

from uuid import uuid4

from kernodeck_contracts import timeline
from kernodeck_contracts.clients import CatalogClient
from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import (
    ExtensionConfirmed,
    ExtensionPaid,
    PaymentInstructionsCreated,
    PaymentReported,
    PaymentSettled,
    PaymentStatusChanged,
    ProvisioningFailed,
    ProvisioningStarted,
    RentalEnded,
    RentalEnding,
    RentalExtended,
    RentalReady,
    SupportRequestAnswered,
    SupportRequestOpened,
)
from kernodeck_contracts.money import format_usd
from kernodeck_contracts.timeline import Said, TimelineCode
from kernodeck_kit.paging import Page
from kernodeck_kit.state_metrics import StateMetrics
from kernodeck_kit.timers import configured_timer
from kernodeck_kit.transport.dependencies import Database, Instrumented, Settings
from kernodeck_kit.transport.events import batch_consumer, consumer
from kernodeck_kit.transport.peers import Peer
from kernodeck_kit.transport.rpc import rpc
from kernodeck_kit.types import utcnow
from kernodeck_kit.units import SqlUnits
from kernodeck_orders import use_cases
from kernodeck_orders.config import OrdersSettings
from kernodeck_orders.domain import (
    EXTENSION_CONFIRMED,
    EXTENSION_PAID,
    RENTAL_ENDING,
    SUPPORT_ANSWERED,
    SUPPORT_REQUEST,
    OrderStatus,
    RentalDates,
    check_delivery_wishes,
    order_key,
)
from kernodeck_orders.events import order_created
from kernodeck_orders.state_metrics import read_state
from kernodeck_orders.store import SqlOrders
from kernodeck_orders.views import order_view

SWEEP_BATCH = 500


class OrdersService:
    name = "orders"

    db = Database()
    instrumented = Instrumented()
    settings = Settings(OrdersSettings)
    state = StateMetrics(read_state)
    catalog = Peer(CatalogClient)

    @property
    def units(self) -> SqlUnits:
        return SqlUnits(self.db, SqlOrders)

    @rpc
    def health(self) -> dict:
        return {"service": self.name}

    @rpc(expected_exceptions=ServiceError)
    def create_order(
        self, account_id, model, duration_days, lots, preparation, ssh_public_key=None, preparation_note=None
    ) -> dict:
        key, description = check_delivery_wishes(preparation, ssh_public_key, preparation_note)
        quote = self.catalog.quote(model=model, duration_days=duration_days, lots=lots, preparation=preparation)
        order = use_cases.create_order(
            self.units,
            uuid4().hex,
            account_id,
            quote,
            utcnow(),
            self.settings.unpaid_ttl,
            self.settings.order_limits,
            key,
            description,
        )
        return order_view(order)

    @rpc(expected_exceptions=ServiceError)
    def list_orders(self, account_id, limit=None, cursor=None) -> dict:
        """{"items": one page of orders, newest first, "next_cursor"} (kernodeck_kit.paging)."""
        page = Page.ask(limit, cursor)
        return page.answer(use_cases.list_orders(self.units, account_id, page), order_key, order_view)

    @rpc(expected_exceptions=ServiceError)
    def get_order(self, account_id, order_id) -> dict:
        return order_view(use_cases.get_order(self.units, account_id, order_id))

    @rpc(expected_exceptions=ServiceError)
    def get_payable_order(self, account_id, order_id) -> dict:
        """What payments keeps of an order from its events, for one it is asked to take a payment for before its
        `order_created` arrived: that event's payload (`created`) and the order's status now."""
        order = use_cases.get_order(self.units, account_id, order_id)
        return {"created": order_created(order, self.settings.unpaid_ttl).to_message(), "status": order.status.value}

    @rpc(expected_exceptions=ServiceError)
    def cancel_order(self, account_id, order_id) -> dict:
        return order_view(use_cases.cancel_order(self.units, account_id, order_id, utcnow()))

    @configured_timer(OrdersSettings, "sweep_interval_s")
    def cancel_unpaid_orders(self) -> int:
        """Cancel the orders left unpaid past the TTL; returns how many."""
        return use_cases.cancel_unpaid_orders(self.units, utcnow(), self.settings.unpaid_ttl, SWEEP_BATCH)

    # A block's payments settle together: each handler takes those that came while it was busy, in one unit.
    @batch_consumer(PaymentSettled)
    def on_payment_settled(self, payloads) -> None:
        events = [PaymentSettled.from_message(payload) for payload in payloads]
        use_cases.apply_payments_settled(self.units, events, utcnow())

    @batch_consumer(PaymentInstructionsCreated)
    def on_payment_instructions_created(self, payloads) -> None:
        use_cases.follow_payments(self.units, [PaymentInstructionsCreated.from_message(p) for p in payloads])

    @batch_consumer(PaymentStatusChanged)
    def on_payment_status_changed(self, payloads) -> None:
        use_cases.follow_payments(self.units, [PaymentStatusChanged.from_message(p) for p in payloads])

    @consumer(PaymentReported)
    def on_payment_reported(self, payload) -> None:
        use_cases.note_payment_reported(self.units, PaymentReported.from_message(payload), utcnow())

    # --- provisioning reports the delivery ------------------------------------------

    @consumer(ProvisioningStarted)
    def on_provisioning_started(self, payload) -> None:
        event = ProvisioningStarted.from_message(payload)
        self._follow(event, OrderStatus.PROVISIONING, Said(TimelineCode.PREPARING))

    @consumer(RentalReady)
    def on_rental_ready(self, payload) -> None:
        event = RentalReady.from_message(payload)
        dates = RentalDates(event.delivered_at, event.starts_at, event.ends_at)
        self._follow(event, OrderStatus.READY, timeline.ready(event.ends_at), dates)

    @consumer(ProvisioningFailed)
    def on_provisioning_failed(self, payload) -> None:
        event = ProvisioningFailed.from_message(payload)
        self._follow(event, OrderStatus.FAILED, timeline.failed(event.reason))

    @consumer(RentalEnded)
    def on_rental_ended(self, payload) -> None:
        event = RentalEnded.from_message(payload)
        self._follow(event, OrderStatus.ENDED, Said(TimelineCode.ENDED))

    @consumer(RentalEnding)
    def on_rental_ending(self, payload) -> None:
        event = RentalEnding.from_message(payload)
        said = timeline.rental_ending(event.hours_left, event.ends_at)
        use_cases.note_event(self.units, event, RENTAL_ENDING, said, utcnow())

    @consumer(RentalExtended)
    def on_rental_extended(self, payload) -> None:
        use_cases.extend_rental(self.units, RentalExtended.from_message(payload), utcnow())

    # --- support's news about the order ------------------------------------------------

    @consumer(SupportRequestOpened)
    def on_support_request_opened(self, payload) -> None:
        event = SupportRequestOpened.from_message(payload)
        if event.order_id is not None:  # a request about a top-up or the account is no order's news
            use_cases.note_event(self.units, event, SUPPORT_REQUEST, timeline.support_request(event.kind), utcnow())

    @consumer(SupportRequestAnswered)
    def on_support_request_answered(self, payload) -> None:
        event = SupportRequestAnswered.from_message(payload)
        said = timeline.of_answer(event.code, event.params, event.answer)
        if event.order_id is not None and said is not None:
            use_cases.note_event(self.units, event, SUPPORT_ANSWERED, said, utcnow())

    @consumer(ExtensionConfirmed)
    def on_extension_confirmed(self, payload) -> None:
        event = ExtensionConfirmed.from_message(payload)
        said = timeline.extension_confirmed(event.extra_days, format_usd(event.price_usd_cents), event.due_by)
        use_cases.note_event(self.units, event, EXTENSION_CONFIRMED, said, utcnow())

    @consumer(ExtensionPaid)
    def on_extension_paid(self, payload) -> None:
        event = ExtensionPaid.from_message(payload)
        use_cases.note_event(self.units, event, EXTENSION_PAID, timeline.extension_paid(event.extra_days), utcnow())

    def _follow(self, event, target: OrderStatus, said: Said, dates: RentalDates | None = None) -> None:
        use_cases.follow_delivery_event(self.units, event, target, said, utcnow(), dates)
