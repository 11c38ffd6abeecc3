"""The provisioning service's nameko entrypoints: thin, over the use cases, the SQL unit and the hosts."""

import logging
from collections.abc import Callable
from datetime import datetime, timedelta

import eventlet

from kernodeck_contracts.clients import AccountsClient, CatalogClient, OrdersClient
from kernodeck_contracts.errors import ServiceError
from kernodeck_contracts.events import ExtensionPaid, OrderCreated, OrderStatusChanged, PaymentStatusChanged
from kernodeck_kit.operators import Operators, operator_only
from kernodeck_kit.state_metrics import StateMetrics
from kernodeck_kit.timers import configured_timer
from kernodeck_kit.transport.dependencies import Database, Instrumented
from kernodeck_kit.transport.events import consumer
from kernodeck_kit.transport.peers import Peer
from kernodeck_kit.transport.rpc import rpc
from kernodeck_kit.units import SqlUnits
from kernodeck_provisioning import metrics
from kernodeck_provisioning.config import ProvisioningSettings
from kernodeck_provisioning.dependencies import Clock, Deliveries, ProvisioningTools
from kernodeck_provisioning.domain import GpuModel
from kernodeck_provisioning.state_metrics import read_state
from kernodeck_provisioning.store import SqlProvisioning
from kernodeck_provisioning.use_cases import access, allocation, capacity, delivery, inventory, term, upkeep

log = logging.getLogger(__name__)

CATALOG_FIRST_SYNC_TRIES = 30


class ProvisioningService:
    name = "provisioning"

    db = Database()
    instrumented = Instrumented()
    state = StateMetrics(read_state)
    tools = ProvisioningTools()
    deliveries = Deliveries()
    clock = Clock()
    catalog = Peer(CatalogClient)
    orders = Peer(OrdersClient)
    accounts = Peer(AccountsClient)
    operators = Operators()

    @property
    def units(self) -> SqlUnits:
        return SqlUnits(self.db, SqlProvisioning)

    @rpc
    def health(self) -> dict:
        return {"service": self.name}

    # --- capacity held before payment instructions ------------------------------

    @rpc(expected_exceptions=ServiceError)
    def hold_capacity(
        self, order_id, account_id, model_id, gpus, until, account_key_needed=False, paid_now=False
    ) -> dict:
        """Hold the order's GPUs until `until` (RFC 3339); idempotent per order. OUT_OF_CAPACITY when none fit (or
        the newcomers' share is held); HOLD_LIMIT_REACHED past the account's unpaid GPUs; SSH_KEY_REQUIRED when
        `account_key_needed` (the order has no key) and the account has none. `paid_now`: the caller pays in the
        same call (a debit of the balance), so the limits on unpaid holds do not apply."""
        try:
            deadline = datetime.fromisoformat(until)
        except (TypeError, ValueError):
            raise ServiceError.field("until", "an RFC 3339 time") from None
        try:
            held = capacity.hold(
                self.units,
                order_id,
                account_id,
                model_id,
                gpus,
                deadline,
                self.clock(),
                account_key_needed is True,
                None if paid_now is True else self.tools.settings.hold_limits,
            )
        except ServiceError as refused:
            metrics.HOLDS.labels(refused.code.value).inc()
            raise
        metrics.HOLDS.labels("held" if held["new"] else "extended").inc()
        return held

    @rpc(expected_exceptions=ServiceError)
    def release_hold(self, order_id) -> dict:
        return {"released": capacity.release(self.units, order_id, "released_by_payments")}

    # --- SSH keys and access ------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    def set_ssh_key(self, account_id, ssh_public_key) -> dict:
        return {"ssh_public_key": access.set_account_key(self.units, account_id, ssh_public_key, self.clock())}

    @rpc(expected_exceptions=ServiceError)
    def get_ssh_key(self, account_id) -> dict:
        return {"ssh_public_key": access.account_key(self.units, account_id)}

    @rpc(expected_exceptions=ServiceError)
    def get_access(self, account_id, order_ids) -> dict:
        """{order_id: access} for the caller's own orders whose rental is live; secrets decrypted here only."""
        return access.access_of(self.units, self.tools.secrets.open, account_id, order_ids, self.clock())

    # --- operators ------------------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def add_node(self, host, port, host_key, model, gpu_count, note="") -> dict:
        """Registered unchecked (one rental at a time until checked): `check_node` checks it now, else the next
        sweep does."""
        known = inventory.model_of(self.units, model, self._catalog_model)
        node = inventory.add_node(self.units, host, port, host_key, known, model, gpu_count, note, self.clock())
        return inventory.node_view(self.units, node.id)

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def check_node(self, node_id) -> dict:
        """Check now what the node provides to keep rentals apart (over SSH); the node as it is then."""
        inventory.check_node(self.units, self.tools.hosts, node_id, self.clock)
        return inventory.node_view(self.units, node_id)

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def set_node_state(self, node_id, state, note="") -> dict:
        node = inventory.set_node_state(self.units, node_id, state, note)
        return inventory.node_view(self.units, node.id)

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def list_nodes(self) -> list[dict]:
        return inventory.list_nodes(self.units)

    def _catalog_model(self, model_id) -> GpuModel | None:
        found = next((m for m in self.catalog.list_catalog().models if m.id == model_id), None)
        return None if found is None else GpuModel(found.id, found.backend, found.gpus_per_lot)

    # --- events from orders, payments and support ---------------------------------------

    @consumer(OrderCreated)
    def on_order_created(self, payload) -> None:
        allocation.order_created(self.units, OrderCreated.from_message(payload))

    @consumer(OrderStatusChanged)
    def on_order_status_changed(self, payload) -> None:
        event = OrderStatusChanged.from_message(payload)
        if allocation.order_status_changed(self.units, event, self._order_of):
            self.deliveries(event.order_id, self._deliver)

    def _order_of(self, account_id: str, order_id: str) -> OrderCreated:
        return _as_created(self.orders.get_order(account_id=account_id, order_id=order_id))

    @consumer(PaymentStatusChanged)
    def on_payment_status_changed(self, payload) -> None:
        capacity.payment_status_changed(self.units, PaymentStatusChanged.from_message(payload))

    @consumer(ExtensionPaid)
    def on_extension_paid(self, payload) -> None:
        term.extension_paid(self.units, ExtensionPaid.from_message(payload), self.clock())

    # --- work on nodes, beside the workers (dependencies.Deliveries) ---------------------------

    def _deliver(self, order_id: str) -> None:
        lease = timedelta(seconds=self.tools.settings.delivery_lease_s)
        delivery.deliver(self.units, self.tools.hosts, self.tools.secrets.seal, order_id, self.clock, lease)

    def _check(self, key: str) -> None:
        """`check:<node id>`."""
        inventory.check_node(self.units, self.tools.hosts, key.removeprefix("check:"), self.clock)

    def _reclaim_leftover(self, key: str) -> None:
        """`leftover:<order id>:<node id>`."""
        _, order_id, node_id = key.split(":")
        delivery.reclaim_leftover(self.units, self.tools.hosts, order_id, node_id, self.clock)

    # --- timers ------------------------------------------------------------------------------

    @configured_timer(ProvisioningSettings, "sweep_interval_s")
    def sweep(self) -> None:
        """Lapsed holds, end warnings, ends of term, deliveries a stopped worker left behind, nodes to check and
        what failed deliveries left on nodes."""
        work = upkeep.sweep(self.units, self.tools.hosts, self.clock)
        for order_id in work.deliveries:
            self.deliveries(order_id, self._deliver)
        for node_id in work.checks:
            self.deliveries(f"check:{node_id}", self._check)
        for order_id, node_id in work.leftovers:
            self.deliveries(f"leftover:{order_id}:{node_id}", self._reclaim_leftover)

    @configured_timer(ProvisioningSettings, "capacity_sync_s", eager=True)
    def sync_capacity(self) -> None:
        """Copy the catalog's models and announce every model's capacity (0 for a model with no node)."""
        listing = _first_answer(self.catalog.list_catalog, CATALOG_FIRST_SYNC_TRIES)
        if listing is None:
            log.warning("the catalog did not answer; capacity announced for the models known here only")
        models = [] if listing is None else [model.model_dump() for model in listing.models]
        capacity.sync_models(self.units, models)


def _as_created(order: dict) -> OrderCreated:
    summary = order["summary"]
    return OrderCreated(
        order_id=order["id"],
        account_id=order["account_id"],
        model_id=summary["model"],
        duration_days=summary["duration_days"],
        lots=summary["lots"],
        total_gpus=summary["total_gpus"],
        preparation=summary["preparation"],
        total_usd_cents=summary["total_usd_cents"],
        ssh_public_key=order.get("ssh_public_key"),
        preparation_note=order.get("preparation_note"),
    )


def _first_answer(call: Callable, tries: int):
    for _ in range(tries):
        try:
            return call()
        except ServiceError:
            eventlet.sleep(1)
    return None
