"""The support service's nameko entrypoints: thin, over the use cases."""

from uuid import uuid4

from kernodeck_contracts.clients import AccountsClient, CatalogClient, OrdersClient, PaymentsClient
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import PaymentSettled, RentalExtended, RentalExtensionRefused
from kernodeck_kit.operators import Operators, operator_only
from kernodeck_kit.paging import Page
from kernodeck_kit.state_metrics import StateMetrics
from kernodeck_kit.transport.dependencies import Database, Instrumented
from kernodeck_kit.transport.events import consumer
from kernodeck_kit.transport.peers import Peer
from kernodeck_kit.transport.rpc import rpc
from kernodeck_kit.types import utcnow
from kernodeck_kit.units import SqlUnits
from kernodeck_support import metrics, use_cases
from kernodeck_support.domain import request_key
from kernodeck_support.state_metrics import read_state
from kernodeck_support.store import SqlSupport
from kernodeck_support.views import extension_view, request_view


class SupportService:
    name = "support"

    db = Database()
    instrumented = Instrumented()
    state = StateMetrics(read_state)
    orders = Peer(OrdersClient)
    catalog = Peer(CatalogClient)
    accounts = Peer(AccountsClient)
    payments = Peer(PaymentsClient)
    operators = Operators()

    @property
    def units(self) -> SqlUnits:
        return SqlUnits(self.db, SqlSupport)

    def _order_of(self, account_id: str, order_id: str) -> dict:
        return self.orders.get_order(account_id=account_id, order_id=order_id)

    def _topup_of(self, account_id: str, topup_id: str) -> dict:
        return self.payments.get_topup(account_id=account_id, topup_id=topup_id)

    def _order_for(self, account_id: str, configuration: use_cases.Configuration, like: dict) -> dict:
        """A new order of `configuration` for the account, delivered with `like`'s key and preparation."""
        return self.orders.create_order(
            account_id=account_id,
            model=configuration.model,
            duration_days=configuration.duration_days,
            lots=configuration.lots,
            preparation=like["summary"]["preparation"],
            ssh_public_key=like.get("ssh_public_key"),
            preparation_note=like.get("preparation_note"),
        )

    def _price_of(self, order: dict, extra_days: int) -> int:
        """The catalog's lot price for `extra_days` times the order's lots (a lot price covers all its GPUs)."""
        summary = order["summary"]
        quote = self.catalog.quote(
            model=summary["model"], duration_days=extra_days, lots=summary["lots"], preparation=summary["preparation"]
        )
        return quote.total_usd_cents

    @rpc
    def health(self) -> dict:
        return {"service": self.name}

    # --- customers ------------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    def open_request(self, account_id, order_id, kind, message, fields=None, topup_id=None) -> dict:
        """A request about an order, a top-up, or (with neither id) the account."""
        try:
            request = use_cases.open_request(
                self.units,
                uuid4().hex,
                account_id,
                (order_id, topup_id),
                kind,
                message,
                fields or {},
                utcnow(),
                self._order_of,
                self._topup_of,
            )
        except ServiceError as refused:
            if refused.code == ErrorCode.SECRET_IN_REQUEST:
                metrics.SECRETS_REFUSED.inc()
            raise
        about = "order" if request.order_id else "topup" if request.topup_id else "account"
        metrics.REQUESTS_OPENED.labels(request.kind, about).inc()
        return request_view(request)

    @rpc(expected_exceptions=ServiceError)
    def list_requests(self, account_id, limit=None, cursor=None) -> dict:
        """{"items": one page of the account's requests, newest first, "next_cursor"} (kernodeck_kit.paging)."""
        page = Page.ask(limit, cursor)
        return page.answer(use_cases.customer_requests(self.units, account_id, page), request_key, request_view)

    @rpc(expected_exceptions=ServiceError)
    def list_extensions(self, account_id, order_ids) -> dict[str, list[dict]]:
        """The confirmed extensions of the account's orders, by order id (every id asked for is a key)."""
        found = {order_id: [] for order_id in order_ids}
        for extension in use_cases.order_extensions(self.units, account_id, list(found)):
            found[extension.order_id].append(extension_view(extension))
        return found

    # --- operators ------------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def list_queue(self, status=None, limit=None, cursor=None) -> dict:
        """{"items": one page of the requests in `status`, oldest first, "next_cursor"}."""
        page = Page.ask(limit, cursor, oldest_first=True)
        found = use_cases.requests_in(self.units, status, page)
        return page.answer(found, request_key, lambda request: request_view(request, operator=True))

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def get_request(self, request_id) -> dict:
        return request_view(use_cases.get_request(self.units, request_id), operator=True)

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def answer_request(self, operator_id, request_id, text) -> dict:
        request = use_cases.answer_request(self.units, operator_id, request_id, text, utcnow())
        metrics.ANSWERS.labels(request.kind).inc()
        return request_view(request, operator=True)

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def confirm_extension(self, operator_id, request_id, note=None) -> dict:
        extension = use_cases.confirm_extension(
            self.units, operator_id, request_id, note, utcnow(), uuid4().hex, self._order_of, self._price_of
        )
        metrics.EXTENSIONS.labels(extension.status.value).inc()
        return extension_view(extension)

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def confirm_configuration(self, operator_id, request_id, model, lots, duration_days, note=None) -> dict:
        """Confirm an extension request's change of configuration as a new order (see the use case)."""
        configuration = use_cases.Configuration(model, lots, duration_days)
        request = use_cases.confirm_configuration(
            self.units, operator_id, request_id, configuration, note, utcnow(), self._order_of, self._order_for
        )
        metrics.EXTENSIONS.labels("configuration_confirmed").inc()
        return request_view(request, operator=True)

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def refuse_extension(self, operator_id, request_id, reason) -> dict:
        return request_view(use_cases.refuse_extension(self.units, operator_id, request_id, reason, utcnow()), True)

    # --- extensions paid and applied ------------------------------------------

    @consumer(PaymentSettled)
    def on_payment_settled(self, payload) -> None:
        event = PaymentSettled.from_message(payload)
        if event.extension_id is None:
            return  # an order's payment: orders applies it
        paid = use_cases.extension_payment_settled(self.units, event, utcnow(), self._order_of)
        metrics.EXTENSIONS.labels("paid" if paid else "refunded").inc()

    @consumer(RentalExtended)
    def on_rental_extended(self, payload) -> None:
        use_cases.extension_applied(self.units, RentalExtended.from_message(payload), utcnow())
        metrics.EXTENSIONS.labels("applied").inc()

    @consumer(RentalExtensionRefused)
    def on_rental_extension_refused(self, payload) -> None:
        use_cases.extension_not_applied(self.units, RentalExtensionRefused.from_message(payload), utcnow())
        metrics.EXTENSIONS.labels("refunded").inc()
