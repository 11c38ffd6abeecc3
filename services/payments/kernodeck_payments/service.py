"""The payments service's nameko entrypoints, thin: each reads its message and calls a use case (use_cases/, on
its unit) or a query (queries.py, operator.py)."""

import eventlet

from kernodeck_contracts.clients import AccountsClient, OrdersClient, ProvisioningClient
from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import (
    BalanceMismatch,
    ChainTransfer,
    ExtensionConfirmed,
    ExtensionPaid,
    ExtensionPaymentRefused,
    OrderCreated,
    OrderStatusChanged,
    PaymentRefused,
    ProvisioningFailed,
    TransferConfirmations,
    TransferConfirmed,
    TransferReverted,
    TransferSeen,
    WatcherStatus,
)
from kernodeck_contracts.statuses import TransferStatus
from kernodeck_kit.operators import Operators, operator_only
from kernodeck_kit.paging import Page
from kernodeck_kit.state_metrics import StateMetrics
from kernodeck_kit.timers import configured_timer
from kernodeck_kit.transport.dependencies import Database, Instrumented, Settings
from kernodeck_kit.transport.events import batch_consumer, consumer
from kernodeck_kit.transport.peers import Peer
from kernodeck_kit.transport.rpc import rpc
from kernodeck_kit.types import utcnow
from kernodeck_kit.units import SqlUnits
from kernodeck_payments import metrics, operator, queries
from kernodeck_payments.availability import RATE_SYMBOLS
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.dependencies import RateSources
from kernodeck_payments.domain.methods import find_method
from kernodeck_payments.peers import RpcOrders, RpcProvisioning
from kernodeck_payments.state_metrics import read_state
from kernodeck_payments.store.units import (
    SqlBalance,
    SqlCopies,
    SqlIntake,
    SqlMethods,
    SqlRates,
    SqlRefunds,
    SqlReviews,
    SqlSettlement,
    SqlWatchers,
)
from kernodeck_payments.use_cases import balance, copies, instructions, methods, rates, refunds, reviews, watchers
from kernodeck_payments.use_cases.intake import check_solana_pool, open_topup
from kernodeck_payments.use_cases.reporting import report_payment
from kernodeck_payments.use_cases.settlement import apply_transfers, sweep
from kernodeck_payments.views import payment_view, topup_view

SWEEP_BATCH = 200


class PaymentsService:
    name = "payments"

    db = Database()
    instrumented = Instrumented()
    settings = Settings(PaymentsSettings)
    state = StateMetrics(read_state, PaymentsSettings)
    rate_sources = RateSources()
    provisioning = Peer(ProvisioningClient)
    orders = Peer(OrdersClient)
    accounts = Peer(AccountsClient)
    operators = Operators()

    @rpc
    def health(self) -> dict:
        """Answers while the service runs; also each chain watcher's last report, for the gateway's /readyz."""
        return {"service": self.name, "watchers": queries.watchers(self.db, self.settings, utcnow())}

    # --- methods ---------------------------------------------------------

    @rpc
    def list_methods(self) -> list[dict]:
        return queries.methods(self.db, self.settings, utcnow())

    # --- intents ---------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    def create_order_payment(self, account_id, order_id, asset, network) -> dict:
        method = find_method(asset, network)
        peers = self._orders(), self._provisioning()
        intent, new = instructions.open_order_payment(
            self._intake(), self.settings, *peers, method, account_id, order_id, utcnow()
        )
        if not new:  # asked again: the same instructions, with what arrived since
            return queries.payment(self.db, self.settings, intent.id, account_id)
        return self._opened(intent)

    @rpc(expected_exceptions=ServiceError)
    def create_topup(self, account_id, amount_usd_cents, asset, network) -> dict:
        topup, intent = open_topup(
            self._intake(), self.settings, account_id, amount_usd_cents, asset, network, utcnow()
        )
        return topup_view(topup, self._opened(intent))

    @rpc(expected_exceptions=ServiceError)
    def create_extension_payment(self, account_id, extension_id, asset, network) -> dict:
        """A crypto intent for a confirmed extension (the rental's GPUs are the customer's already: no hold)."""
        method = find_method(asset, network)
        intent = instructions.open_extension_payment(
            self._intake(), self.settings, method, account_id, extension_id, utcnow, *self._waits()
        )
        return self._opened(intent)

    def _opened(self, intent) -> dict:
        metrics.INTENTS_OPENED.labels(intent.asset, intent.network, intent.purpose).inc()
        return payment_view(intent, [], self.settings.ethereum_chain_id)  # nothing can have arrived yet

    def _intake(self) -> SqlUnits:
        return SqlUnits(self.db, lambda tx: SqlIntake(tx, self.settings))

    def _orders(self) -> RpcOrders:
        return RpcOrders(self.orders)

    def _provisioning(self) -> RpcProvisioning:
        return RpcProvisioning(self.provisioning)

    @rpc(expected_exceptions=ServiceError)
    def get_payment(self, account_id, payment_id) -> dict:
        return queries.payment(self.db, self.settings, payment_id, account_id)

    @rpc(expected_exceptions=ServiceError)
    def list_order_payments(self, account_id, order_id) -> list[dict]:
        return queries.payments_for(self.db, self.settings, account_id, order_id)

    @rpc(expected_exceptions=ServiceError)
    def list_payments_for_orders(self, account_id, order_ids) -> dict[str, list[dict]]:
        return queries.payments_for_many(self.db, self.settings, account_id, order_ids)

    @rpc(expected_exceptions=ServiceError)
    def list_topups(self, account_id, limit=None, cursor=None) -> dict:
        return queries.topups(self.db, self.settings, account_id, Page.ask(limit, cursor))

    @rpc(expected_exceptions=ServiceError)
    def get_topup(self, account_id, topup_id) -> dict:
        return queries.topup(self.db, self.settings, account_id, topup_id)

    @rpc(expected_exceptions=ServiceError)
    def list_payment_outcomes(self, account_id, payment_ids) -> dict[str, dict]:
        """{payment id: {"credits", "reviews"}}: what each payment brought to the balance, and its checks."""
        return queries.outcomes(self.db, account_id, list(payment_ids))

    @rpc(expected_exceptions=ServiceError)
    def report_payment(self, account_id, payment_id) -> dict:
        """ "J'ai payé": note the signal and ask the watcher to look now. Credits nothing."""
        intent, transfers = report_payment(self._settlement(), account_id, payment_id, utcnow())
        return payment_view(intent, transfers, self.settings.ethereum_chain_id)

    # --- balance ---------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    def get_balance(self, account_id) -> dict:
        return queries.balance(self.db, account_id)

    @rpc(expected_exceptions=ServiceError)
    def list_ledger(self, account_id, limit=None, cursor=None) -> dict:
        """{"items": a page of the balance's movements, newest first, "next_cursor"}."""
        return queries.ledger(self.db, account_id, Page.ask(limit, cursor, width=1))

    @rpc(expected_exceptions=ServiceError)
    def pay_with_balance(self, account_id, order_id) -> dict:
        peers = self._orders(), self._provisioning()
        return balance.pay_order_from_balance(self._balance(), self._intake(), *peers, account_id, order_id, utcnow)

    @rpc(expected_exceptions=ServiceError)
    def pay_extension_with_balance(self, account_id, extension_id) -> dict:
        units, intake, waits = self._balance(), self._intake(), self._waits()
        return balance.pay_extension_from_balance(units, intake, account_id, extension_id, utcnow, *waits)

    def _balance(self) -> SqlUnits:
        return SqlUnits(self.db, SqlBalance)

    @staticmethod
    def _waits() -> tuple:
        """The hub's clock and sleep, for a use case that waits a moment for an event on its way."""
        return eventlet.hubs.get_hub().clock, eventlet.sleep

    # --- orders ----------------------------------------------------------

    @consumer(OrderCreated)
    def on_order_created(self, payload):
        copies.order_created(self._copies(), OrderCreated.from_message(payload))

    @batch_consumer(OrderStatusChanged)
    def on_order_status_changed(self, payloads):
        copies.order_statuses_changed(self._copies(), [OrderStatusChanged.from_message(p) for p in payloads])

    # --- extensions (support) ---------------------------------------------

    @consumer(ExtensionConfirmed)
    def on_extension_confirmed(self, payload):
        copies.extension_confirmed(self._copies(), ExtensionConfirmed.from_message(payload))

    @consumer(ExtensionPaid)
    def on_extension_paid(self, payload):
        copies.extension_paid(self._copies(), ExtensionPaid.from_message(payload))

    def _copies(self) -> SqlUnits:
        return SqlUnits(self.db, SqlCopies)

    # --- operators -------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def list_reviews(self, status=None, limit=None, cursor=None) -> dict:
        return operator.reviews(self.db, status, Page.ask(limit, cursor))

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def resolve_review(self, operator_id, review_id, decision, amount_usd_cents, note) -> dict:
        units = SqlUnits(self.db, lambda tx: SqlReviews(tx, self.settings))
        reviews.resolve_review(units, operator_id, review_id, decision, amount_usd_cents, note, utcnow())
        return operator.review(self.db, review_id)

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def set_method_enabled(self, operator_id, asset, network, enabled) -> dict:
        method = find_method(asset, network)
        methods.switch_method(SqlUnits(self.db, SqlMethods), operator_id, method, enabled, utcnow())
        [switched] = queries.methods(self.db, self.settings, utcnow(), only=method)
        return switched

    # --- watchers --------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    def watched_addresses(self, network, after=None, limit=queries.WATCHED_PAGE) -> dict:
        return queries.watched(self.db, network, utcnow(), after, limit)

    # A block's transfers arrive together: each handler takes those that came while it was busy, in one unit.
    @batch_consumer(TransferSeen)
    def on_transfer_seen(self, payloads):
        events = [TransferSeen.from_message(payload) for payload in payloads]
        seen = [(e, TransferStatus.SEEN if e.block_height is None else TransferStatus.CONFIRMING) for e in events]
        self._on_transfers(seen)

    @batch_consumer(TransferConfirmations)
    def on_transfer_confirmations(self, payloads):
        events = [TransferConfirmations.from_message(payload) for payload in payloads]
        self._on_transfers([(e, TransferStatus.CONFIRMING) for e in events])

    @batch_consumer(TransferConfirmed)
    def on_transfer_confirmed(self, payloads):
        events = [TransferConfirmed.from_message(payload) for payload in payloads]
        self._on_transfers([(e, TransferStatus.CONFIRMED) for e in events])

    @batch_consumer(TransferReverted)
    def on_transfer_reverted(self, payloads):
        events = [TransferReverted.from_message(payload) for payload in payloads]
        self._on_transfers([(e, TransferStatus.REVERTED) for e in events])

    def _on_transfers(self, events: list[tuple[ChainTransfer, TransferStatus]]) -> None:
        apply_transfers(self._settlement(), events, utcnow())

    def _settlement(self) -> SqlUnits:
        return SqlUnits(self.db, lambda tx: SqlSettlement(tx, self.settings))

    @consumer(WatcherStatus)
    def on_watcher_status(self, payload):
        watchers.watcher_status(self._watchers(), WatcherStatus.from_message(payload))

    @consumer(BalanceMismatch)
    def on_balance_mismatch(self, payload):
        watchers.balance_mismatch(self._watchers(), BalanceMismatch.from_message(payload), utcnow())

    def _watchers(self) -> SqlUnits:
        return SqlUnits(self.db, SqlWatchers)

    @consumer(PaymentRefused)
    def on_payment_refused(self, payload):
        """Orders could not use a settled payment (paid already, cancelled): the money goes to the balance."""
        refunds.payment_refused(self._refunds(), PaymentRefused.from_message(payload), utcnow())

    @consumer(ExtensionPaymentRefused)
    def on_extension_payment_refused(self, payload):
        """Support could not use a settled payment (paid already, past due, the rental over): to the balance."""
        refunds.extension_payment_refused(self._refunds(), ExtensionPaymentRefused.from_message(payload), utcnow())

    @consumer(ProvisioningFailed)
    def on_provisioning_failed(self, payload):
        """Nothing could be delivered for a paid order: what was paid for it goes back to the balance."""
        refunds.provisioning_failed(self._refunds(), ProvisioningFailed.from_message(payload), utcnow())

    def _refunds(self) -> SqlUnits:
        return SqlUnits(self.db, lambda tx: SqlRefunds(tx, self.settings))

    # --- timers ----------------------------------------------------------

    @configured_timer(PaymentsSettings, "rate_refresh_s", eager=True)
    def refresh_rates(self) -> int:
        return rates.refresh_rates(SqlUnits(self.db, SqlRates), self.rate_sources, RATE_SYMBOLS)

    @configured_timer(PaymentsSettings, "sweep_interval_s")
    def sweep(self) -> int:
        """Intents whose deadline passed with something left to decide: reconcile them; a word when the Solana pool
        (whose addresses are each given once) runs low."""
        swept = sweep(self._settlement(), utcnow(), SWEEP_BATCH)
        check_solana_pool(self._intake(), self.settings)
        return swept
