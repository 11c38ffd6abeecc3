"""Helpers of the payments integration tests: waiting on the running containers, the bus, the database.

Waiting never sleeps a fixed time: each helper polls a condition with short
waits. A chain event is "handled" once the payments worker that consumed it
has finished (the kit's entrypoint histogram counts finished workers, in this
very process), so a test can assert that an event changed NOTHING.
"""

import itertools
from collections import defaultdict
from contextlib import contextmanager
from datetime import UTC, datetime

import eventlet
from nameko.standalone.events import event_dispatcher
from nameko.testing.services import entrypoint_hook
from prometheus_client import REGISTRY
from sqlalchemy import text
from sqlmodel import Session

from kernodeck_contracts.events import (
    BalanceMismatch,
    ChainTransfer,
    Event,
    ExtensionConfirmed,
    ExtensionPaid,
    ExtensionPaymentRefused,
    OrderCreated,
    OrderStatusChanged,
    TransferConfirmations,
    TransferConfirmed,
    TransferReverted,
    TransferSeen,
    WatcherStatus,
)
from kernodeck_kit.db import make_engine
from kernodeck_kit.metrics import ENTRYPOINT_ERRORS
from kernodeck_kit.operators import CommandRpcProxy
from kernodeck_kit.testing import wait_until
from kernodeck_kit.transport.calls import RemoteServiceError
from kernodeck_payments.domain.methods import DEFAULT_CONFIRMATIONS

HANDLERS = {
    TransferSeen: "on_transfer_seen",
    TransferConfirmations: "on_transfer_confirmations",
    TransferConfirmed: "on_transfer_confirmed",
    TransferReverted: "on_transfer_reverted",
    WatcherStatus: "on_watcher_status",
    BalanceMismatch: "on_balance_mismatch",
    OrderCreated: "on_order_created",
    OrderStatusChanged: "on_order_status_changed",
    ExtensionConfirmed: "on_extension_confirmed",
    ExtensionPaid: "on_extension_paid",
    ExtensionPaymentRefused: "on_extension_payment_refused",
}

# The mainnet token contracts (EIP-55 case for Ethereum), as the watchers report them.
USDT_ETHEREUM = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
USDC_ETHEREUM = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
USDT_TRON = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
UNKNOWN_ERC20 = "0x1111111111111111111111111111111111111111"

CONFIRMED = DEFAULT_CONFIRMATIONS  # what each network requires unless configured otherwise
_txids = itertools.count(1)


def txid(prefix: str = "") -> str:
    """A fresh transaction id (64 hex characters)."""
    return f"{prefix}{next(_txids):x}".rjust(64, "0")


def finished(entrypoint: str, service: str = "payments") -> int:
    """How many workers of `service.entrypoint` have finished in this process so far."""
    value = REGISTRY.get_sample_value(
        "kernodeck_entrypoint_seconds_count", {"service": service, "entrypoint": entrypoint}
    )
    return int(value or 0)


def applied_events(consumer: str, service: str = "payments") -> int:
    """How many events `consumer` has taken in this process so far, each once (applied, or known already)."""
    return int(
        sum(
            REGISTRY.get_sample_value(f"kernodeck_events_{kind}_total", {"service": service, "consumer": consumer}) or 0
            for kind in ("consumed", "duplicate")
        )
    )


def failed(entrypoint: str, service: str = "payments") -> int:
    return int(
        sum(
            sample.value
            for metric in ENTRYPOINT_ERRORS.collect()
            for sample in metric.samples
            if sample.name.endswith("_total")
            and sample.labels["service"] == service
            and sample.labels["entrypoint"] == entrypoint
        )
    )


def code_of(call, *args) -> str:
    """The ServiceError code a remote call answers with (the call must fail)."""
    try:
        result = call(*args)
    except RemoteServiceError as error:
        return error.code
    raise AssertionError(f"expected a refusal, got {result!r}")


def refusal(call, *args) -> RemoteServiceError:
    try:
        result = call(*args)
    except RemoteServiceError as error:
        return error
    raise AssertionError(f"expected a refusal, got {result!r}")


def run_entrypoint(container, name: str, *args):
    """Run a timer (or any entrypoint) of a running container now, in a worker; its return value."""
    with entrypoint_hook(container, name) as hook:
        return hook(*args)


def parse_time(text_value: str) -> datetime:
    return datetime.fromisoformat(text_value.replace("Z", "+00:00"))


class Chain:
    """The watchers' (and orders') side of the bus: publish their events, wait until payments has handled each."""

    def __init__(self, config: dict):
        self._dispatch = event_dispatcher(config)
        self._sequence = itertools.count(1)

    def publish(self, event: Event) -> None:
        self._dispatch(event.source, event.type, event.to_message())

    def send(self, event_class, *, wait: bool = True, **fields) -> Event:
        """Publish a chain event (the next sequence unless given) and wait until its handler finished."""
        if issubclass(event_class, ChainTransfer):
            fields.setdefault("sequence", next(self._sequence))
        event = event_class(**fields)
        self.deliver(event, wait=wait)
        return event

    def deliver(self, event: Event, wait: bool = True) -> None:
        """Publish `event` as it is (again, for a redelivery) and wait until payments has handled it."""
        entrypoint = HANDLERS[type(event)]
        done, errors = finished(entrypoint), failed(entrypoint)
        self.publish(event)
        if wait:
            wait_until(lambda: finished(entrypoint) > done, what=f"payments to handle {event.type}")
            assert failed(entrypoint) == errors, f"payments failed to handle {event!r}"

    def deliver_all(self, events: list[ChainTransfer]) -> None:
        """Publish every chain event at once, then wait until payments has applied them all (in any order, some
        together: the handlers take batches)."""
        errors = {HANDLERS[type(event)]: failed(HANDLERS[type(event)]) for event in events}
        consumers = {f"chain.{event.type}" for event in events}
        applied = sum(applied_events(consumer) for consumer in consumers)
        for event in events:
            self.publish(event)
        wait_until(
            lambda: sum(applied_events(consumer) for consumer in consumers) >= applied + len(events),
            what=f"payments to apply {len(events)} events",
        )
        for entrypoint, before in errors.items():
            assert failed(entrypoint) == before, f"payments failed to handle one of {events!r}"

    def event(self, event_class, **fields) -> Event:
        """A chain event with the next sequence (unless given), not yet published."""
        fields.setdefault("sequence", next(self._sequence))
        return event_class(**fields)


def report_watchers(watcher: Chain, *networks: str, lagging: bool = False) -> None:
    """Each network's watcher (every network's when none is named) reports, up to date unless `lagging`."""
    for network in networks or sorted(CONFIRMED):
        watcher.send(
            WatcherStatus,
            network=network,
            node_height=1_000,
            scanned_height=990 if lagging else 1_000,
            lag_seconds=900 if lagging else 0,
            lagging=lagging,
        )


class PaymentsDb:
    """Direct access to the payments database: what no RPC shows, and time travel."""

    def __init__(self, url: str):
        self.engine = make_engine(url, pool_size=2)

    def rows(self, sql: str, **params) -> list[dict]:
        with self.engine.begin() as conn:
            return [dict(row._mapping) for row in conn.execute(text(sql), params)]

    def execute(self, sql: str, **params) -> int:
        with self.engine.begin() as conn:
            return conn.execute(text(sql), params).rowcount

    def move_deadline(self, payment_id: str, to: datetime) -> None:
        assert self.execute("UPDATE payment_intents SET expires_at = :to WHERE id = :id", to=to, id=payment_id) == 1

    def age_rates(self, as_of: datetime) -> None:
        """Every stored rate observation as if made at `as_of` (time passed, no fresh rate came)."""
        self.execute("UPDATE exchange_rates SET as_of = :as_of", as_of=as_of)

    def transfer(self, network: str, tx: str, index: int = 0) -> dict | None:
        found = self.rows(
            "SELECT * FROM chain_transfers WHERE network = :n AND txid = :t AND index = :i", n=network, t=tx, i=index
        )
        return found[0] if found else None

    def ledger(self) -> list[dict]:
        return self.rows("SELECT * FROM ledger_entries ORDER BY id")

    def account_nets(self) -> dict[str, int]:
        """Each ledger account's net (credits minus debits), in cents."""
        net: dict[str, int] = defaultdict(int)
        for entry in self.ledger():
            net[entry["credit_account"]] += entry["amount_cents"]
            net[entry["debit_account"]] -= entry["amount_cents"]
        return dict(net)

    def session(self) -> Session:
        return Session(self.engine)

    def close(self) -> None:
        self.engine.dispose()


@contextmanager
def rpc_proxies(config: dict, service: str, count: int):
    """`count` RPC proxies to `service` in an eventlet queue: one per greenthread at a time (as the operator
    command, so that operator RPCs may be among the calls)."""
    proxies = [CommandRpcProxy(config, "cli:tests") for _ in range(count)]
    started = []
    try:
        free = eventlet.queue.LightQueue()
        for proxy in proxies:
            free.put(proxy.start()[service])
            started.append(proxy)
        yield free
    finally:
        for proxy in started:
            proxy.stop()


def concurrently(config: dict, service: str, method: str, calls: list[tuple], width: int = 50) -> list:
    """Each `args` of `calls` as service.method(*args), `width` at a time over `width` proxies.

    Returns what each call returned, or the code of the ServiceError it raised, in the order of `calls`.
    """
    with rpc_proxies(config, service, min(width, len(calls))) as free:

        def one(args):
            proxy = free.get()
            try:
                return getattr(proxy, method)(*args)
            except RemoteServiceError as error:
                return error.code
            finally:
                free.put(proxy)

        return list(eventlet.GreenPool(width).imap(one, calls))


def now() -> datetime:
    return datetime.now(UTC)


def timeline_kinds(order: dict) -> list[str]:
    return [entry["kind"] for entry in order["timeline"]]


def transfer_fields(payment: dict, amount: int, *, tx: str | None = None, index: int = 0, **extra) -> dict:
    """The fields of a chain event paying `amount` base units to `payment`'s address."""
    fields = {"network": payment["network"], "txid": tx or txid(), "index": index, "address": payment["address"]}
    return {**fields, "amount": amount, **extra}


def confirm(watcher: Chain, payment: dict, amount: int, *, confirmations: int | None = None, **extra) -> Event:
    """A TransferConfirmed of `amount` to `payment` with the confirmations its network requires."""
    fields = transfer_fields(payment, amount, **extra)
    fields.setdefault("block_height", 100)
    fields["confirmations"] = CONFIRMED[payment["network"]] if confirmations is None else confirmations
    return watcher.send(TransferConfirmed, **fields)
