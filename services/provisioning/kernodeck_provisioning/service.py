"""The provisioning service's nameko entrypoints: thin, over the use cases, the SQL unit of work and the hosts."""

import logging
from collections.abc import Callable
from contextlib import contextmanager
from datetime import datetime, timedelta

import eventlet
from nameko.rpc import RpcProxy

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.events import ExtensionPaid, OrderCreated, OrderStatusChanged, PaymentStatusChanged
from kernodeck_kit.operators import Operators, operator_only
from kernodeck_kit.state_metrics import StateMetrics
from kernodeck_kit.timers import configured_timer
from kernodeck_kit.transport.calls import call_service
from kernodeck_kit.transport.dependencies import Database, Instrumented
from kernodeck_kit.transport.events import consumer
from kernodeck_kit.transport.rpc import rpc
from kernodeck_provisioning import metrics, usecases
from kernodeck_provisioning.config import ProvisioningSettings
from kernodeck_provisioning.dependencies import Clock, Deliveries, ProvisioningTools
from kernodeck_provisioning.domain import GpuModel, Isolation, is_live
from kernodeck_provisioning.hosts import NodeRefused, ProcessesSurvive
from kernodeck_provisioning.state_metrics import read_state
from kernodeck_provisioning.store import SqlUnitOfWork

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
    catalog = RpcProxy("catalog")
    orders = RpcProxy("orders")
    accounts = RpcProxy("accounts")
    operators = Operators()

    @contextmanager
    def uow(self):
        with self.db.transaction() as tx:
            yield SqlUnitOfWork(tx)

    @rpc
    def health(self) -> dict:
        return {"service": self.name}

    # --- capacity held before payment instructions ------------------------------

    @rpc(expected_exceptions=ServiceError)
    def hold_capacity(self, order_id, account_id, model_id, gpus, until, account_key_needed=False) -> dict:
        """Hold the order's GPUs until `until` (RFC 3339); idempotent per order. OUT_OF_CAPACITY when none fit;
        SSH_KEY_REQUIRED when `account_key_needed` (the order has no key) and the account has none."""
        try:
            deadline = datetime.fromisoformat(until)
        except (TypeError, ValueError):
            raise ServiceError.field("until", "an RFC 3339 time") from None
        try:
            with self.uow() as uow:
                held = usecases.hold(
                    uow, order_id, account_id, model_id, gpus, deadline, self.clock(), account_key_needed is True
                )
        except ServiceError as refused:
            metrics.HOLDS.labels(refused.code.value).inc()
            raise
        metrics.HOLDS.labels("held" if held["new"] else "extended").inc()
        return held

    @rpc(expected_exceptions=ServiceError)
    def release_hold(self, order_id) -> dict:
        with self.uow() as uow:
            return {"released": usecases.release(uow, order_id, "released_by_payments")}

    # --- SSH keys and access ------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    def set_ssh_key(self, account_id, ssh_public_key) -> dict:
        with self.uow() as uow:
            return {"ssh_public_key": usecases.set_account_key(uow, account_id, ssh_public_key, self.clock())}

    @rpc(expected_exceptions=ServiceError)
    def get_ssh_key(self, account_id) -> dict:
        with self.uow() as uow:
            return {"ssh_public_key": uow.account_key(account_id)}

    @rpc(expected_exceptions=ServiceError)
    def get_access(self, account_id, order_ids) -> dict:
        """{order_id: access} for the caller's own orders whose rental is live; secrets decrypted here only."""
        now, secrets = self.clock(), self.tools.secrets
        with self.uow() as uow:
            return {
                rental.order_id: usecases.access_view(
                    secrets.open(rental.access_secret), uow.get_order(rental.order_id).preparation
                )
                for rental in uow.rentals_of(account_id, list(order_ids))
                if is_live(rental, now)
            }

    # --- operators ------------------------------------------------------------------

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def add_node(self, host, port, host_key, model, gpu_count, note="") -> dict:
        """Registered unchecked (one rental at a time until checked): `check_node` checks it now, else the next
        sweep does."""
        with self.uow() as uow:
            known = uow.get_model(model) if isinstance(model, str) else None
        known = known or self._catalog_model(model)
        with self.uow() as uow:
            node = usecases.add_node(uow, host, port, host_key, known, model, gpu_count, note, self.clock())
            view = usecases.node_view(uow, node)
        log.info("node added", extra={"node_id": node.id, "model": node.model_id, "gpus": node.gpu_count})
        return view

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def check_node(self, node_id) -> dict:
        """Check now what the node provides to keep rentals apart (over SSH); the node as it is then."""
        self._check(f"check:{node_id}")
        with self.uow() as uow:
            node = uow.get_node(node_id)
            if node is None:
                raise ServiceError(ErrorCode.NOT_FOUND, "no such node")
            return usecases.node_view(uow, node)

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def set_node_state(self, node_id, state, note="") -> dict:
        with self.uow() as uow:
            node = usecases.set_node_state(uow, node_id, state, note)
            view = usecases.node_view(uow, node)
        log.info("node state set", extra={"node_id": node_id, "state": state})
        return view

    @rpc(expected_exceptions=ServiceError)
    @operator_only
    def list_nodes(self) -> list[dict]:
        with self.uow() as uow:
            return [usecases.node_view(uow, node) for node in uow.list_nodes()]

    def _catalog_model(self, model_id) -> GpuModel | None:
        models = call_service(self.catalog.list_catalog)["models"]
        found = next((m for m in models if m["id"] == model_id), None)
        return None if found is None else GpuModel(found["id"], found["backend"], found["gpus_per_lot"])

    # --- events from orders and payments -----------------------------------------------

    @consumer(OrderCreated.source, OrderCreated.type)
    def on_order_created(self, payload) -> None:
        event = OrderCreated.from_message(payload)
        with self.db.consume("orders.order_created", event) as tx:
            if tx is not None:
                usecases.order_created(SqlUnitOfWork(tx), event)

    @consumer(OrderStatusChanged.source, OrderStatusChanged.type)
    def on_order_status_changed(self, payload) -> None:
        event = OrderStatusChanged.from_message(payload)
        if event.status not in ("paid", "cancelled"):
            return
        with self.db.consume("orders.order_status_changed", event) as tx:
            if tx is None:
                return
            uow = SqlUnitOfWork(tx)
            if event.status == "cancelled":
                usecases.order_cancelled(uow, event.order_id)
                return
            if uow.get_order(event.order_id) is None:  # its OrderCreated is late, or came before provisioning ran
                usecases.order_created(
                    uow, _as_created(call_service(self.orders.get_order, event.account_id, event.order_id))
                )
            deliver = usecases.order_paid(uow, event.order_id, self.clock())
        if deliver:
            self.deliveries(event.order_id, self._deliver)

    @consumer(PaymentStatusChanged.source, PaymentStatusChanged.type)
    def on_payment_status_changed(self, payload) -> None:
        event = PaymentStatusChanged.from_message(payload)
        if event.order_id is None or event.purpose != "order":
            return
        with self.db.consume("payments.payment_status_changed", event) as tx:
            if tx is not None:
                usecases.payment_status(SqlUnitOfWork(tx), event.order_id, event.payment_id, event.status)

    @consumer(ExtensionPaid.source, ExtensionPaid.type)
    def on_extension_paid(self, payload) -> None:
        event = ExtensionPaid.from_message(payload)
        with self.db.consume("support.extension_paid", event) as tx:
            if tx is not None:
                usecases.extension_paid(
                    SqlUnitOfWork(tx), event.order_id, event.extension_id, event.extra_days, self.clock()
                )

    # --- delivery --------------------------------------------------------------------------

    def _deliver(self, order_id: str) -> None:
        """Deliver on the rental's node, moving to the next node after each refusal, until ready or failed."""
        tools = self.tools
        lease = timedelta(seconds=tools.settings.delivery_lease_s)
        while True:
            with self.uow() as uow:
                job = usecases.take_delivery(uow, order_id, self.clock(), lease)
            if job is None:
                return
            try:
                delivered = tools.hosts.deliver(job)
            except NodeRefused as refused:
                metrics.NODE_REFUSALS.labels(refused.step).inc()
                if isinstance(refused, ProcessesSurvive):
                    metrics.RECLAIM_SURVIVORS.inc()
                log.error(
                    "node refused a delivery; it is out of service until an operator looks at it",
                    extra={
                        "order_id": order_id,
                        "node_id": job.node.id,
                        "step": refused.step,
                        "reason": refused.reason,
                        "leftover": refused.leftover,
                    },
                )
                with self.uow() as uow:
                    if not usecases.node_refused(uow, job, str(refused), self.clock(), refused.leftover):
                        metrics.DELIVERIES.labels("failed").inc()
                        return
                continue
            for step in ("connect", "user", "preparation", "readiness", "access"):
                metrics.DELIVERY_STEP_SECONDS.labels(step).observe(getattr(delivered.times, step))
            with self.uow() as uow:
                usecases.delivered(uow, job, tools.secrets.seal(delivered.access), self.clock())
            metrics.DELIVERIES.labels("ready").inc()
            return

    def _check(self, key: str) -> None:
        """`check:<node id>`: what the node provides to keep rentals apart, recorded on the node."""
        node_id = key.removeprefix("check:")
        with self.uow() as uow:
            node = uow.get_node(node_id)
        if node is None:
            return
        try:
            found = self.tools.hosts.check(node)
        except NodeRefused as refused:
            log.warning("a node's isolation could not be checked", extra={"node_id": node_id, "reason": str(refused)})
            with self.uow() as uow:
                usecases.node_check_failed(uow, node_id, str(refused), self.clock())
            return
        metrics.NODE_CHECKS.labels(found.isolation).inc()
        log.log(
            logging.INFO if found.isolation == Isolation.KERNEL else logging.WARNING,
            "node checked",
            extra={"node_id": node_id, "isolation": found.isolation, "note": found.note},
        )
        with self.uow() as uow:
            usecases.node_checked(uow, node_id, Isolation(found.isolation), found.note, self.clock())

    def _reclaim_leftover(self, key: str) -> None:
        """`leftover:<order id>:<node id>`: what a failed delivery left on a node, reclaimed now."""
        _, order_id, node_id = key.split(":")
        with self.uow() as uow:
            rental, node = uow.get_rental(order_id), uow.get_node(node_id)
        if rental is None or node is None or node_id not in rental.leftover_nodes:
            return
        if self._reclaimed(node, rental.unix_user, order_id):
            with self.uow() as uow:
                usecases.leftover_reclaimed(uow, order_id, node_id)

    def _reclaimed(self, node, unix_user: str, order_id: str) -> bool:
        """Reclaim on the node; a process that survives sends the node out of service."""
        try:
            self.tools.hosts.reclaim(node, unix_user)
            return True
        except ProcessesSurvive as survived:
            metrics.RECLAIM_SURVIVORS.inc()
            log.error(
                "a process of a rental survived its reclaim; its node is out of service, its GPUs stay taken",
                extra={"order_id": order_id, "node_id": node.id, "reason": survived.reason},
            )
            with self.uow() as uow:
                usecases.reclaim_survived(uow, node.id, survived.reason, self.clock())
        except NodeRefused as refused:
            metrics.RECLAIM_FAILURES.inc()
            log.error(
                "a rental could not be reclaimed yet",
                extra={"order_id": order_id, "node_id": node.id, "reason": str(refused)},
            )
        return False

    # --- timers ------------------------------------------------------------------------------

    @configured_timer(ProvisioningSettings, "sweep_interval_s")
    def sweep(self) -> None:
        """Lapsed holds, end warnings, ends of term, deliveries a stopped worker left behind, nodes to check and
        what failed deliveries left on nodes."""
        now = self.clock()
        with self.uow() as uow:
            models = [model.id for model in uow.list_models()]
        for model_id in models:
            with self.uow() as uow:
                usecases.sweep_holds(uow, model_id, now)
        with self.uow() as uow:
            usecases.send_warnings(uow, now)
            ending = uow.ready_ending_before(now, usecases.BATCH)
            due = uow.deliveries_due(now, usecases.BATCH)
            unchecked = usecases.nodes_to_check(uow, now)
            leftovers = uow.rentals_with_leftovers(usecases.BATCH)
        for rental in ending:
            self._end(rental.order_id, rental.node_id, rental.unix_user, now)
        for order_id in due:
            self.deliveries(order_id, self._deliver)
        for node_id in unchecked:
            self.deliveries(f"check:{node_id}", self._check)
        for rental in leftovers:
            for node_id in rental.leftover_nodes:
                self.deliveries(f"leftover:{rental.order_id}:{node_id}", self._reclaim_leftover)

    def _end(self, order_id: str, node_id: str, unix_user: str, now: datetime) -> None:
        with self.uow() as uow:
            node = uow.get_node(node_id)
        if self._reclaimed(node, unix_user, order_id):
            with self.uow() as uow:
                usecases.ended(uow, order_id, now)

    @configured_timer(ProvisioningSettings, "capacity_sync_s", eager=True)
    def sync_capacity(self) -> None:
        """Copy the catalog's models and announce every model's capacity (0 for a model with no node)."""
        models = _first_answer(lambda: call_service(self.catalog.list_catalog)["models"], CATALOG_FIRST_SYNC_TRIES)
        if models is None:
            log.warning("the catalog did not answer; capacity announced for the models known here only")
            models = []
        with self.uow() as uow:
            usecases.sync_models(uow, models)


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
