"""Least privilege on the bus (ARCHITECTURE.md rule 9): one broker user per process kind, and what it may do.

Each user may publish only to its own events' exchange (`<source>.events`), to its own retry and dead-letter
exchanges, and to `nameko-rpc` with the routing keys of the RPCs it calls and of replies (a reply's key is
the caller's random reply id); it may read only its own queues (its RPC queue, its event queues, its reply
queues). RabbitMQ enforces it: the configure/write/read permissions are regular expressions over exchange
and queue names, and a topic permission on `nameko-rpc` restricts the routing keys a user may publish with
(which RPC it calls) and bind with (whose requests it receives). The broker's default exchange is nobody's
but the operator's: a user allowed it could put anything in any queue.

Limits: a user that consumes another service's events declares that service's exchange, which RabbitMQ
counts as configuring it (it could delete it, never publish to it); the operator's user may do anything
(it replays dead letters through the default exchange).

Code that calls a new RPC or handles a new event source adds it to its principal below:
tests/integration/test_bus_permissions.py compares this table with the code and names what is missing.

`kernodeck-admin broker apply` writes these users and permissions to a vhost through the management API
(`make run`, the test stacks, the Kubernetes job `rabbitmq-users`).
"""

import re
from dataclasses import dataclass, field

RPC_EXCHANGE = "nameko-rpc"
REPLY_KEY = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"  # nameko's and the gateway's reply ids
WATCHED_NETWORKS = ("bitcoin", "litecoin", "ethereum", "tron", "solana")
USER_PREFIX = "kernodeck-"
OPERATOR = "admin"  # kernodeck-admin: the operator command, allowed everything


@dataclass(frozen=True)
class Principal:
    """A process kind on the bus: its user is `kernodeck-<name>`, its nameko service name `service`."""

    name: str
    service: str
    publishes: str | None = None  # the source of its events: it publishes to `<publishes>.events`
    consumes: tuple[str, ...] = ()  # the sources whose events it reads
    calls: tuple[str, ...] = ()  # the RPCs it calls, `service.method`
    queues: tuple[str, ...] = field(default=())  # queues of its own beyond nameko's (notify's)

    @property
    def user(self) -> str:
        return USER_PREFIX + self.name

    def permissions(self) -> dict[str, str]:
        """RabbitMQ's configure, write and read regular expressions for this user."""
        s = re.escape(self.service)
        sources = "|".join(map(re.escape, self.consumes))
        own_queues = [f"rpc-{s}", rf"rpc\.reply-{s}-{REPLY_KEY}", *map(re.escape, self.queues)]
        if sources:
            own_queues.append(rf"evt-({sources})-[a-z_]+--{s}\.[a-z_]+")
        own_exchanges = [
            rf"{s}\.retry",
            rf"{s}\.dead-letters",
            *([rf"{re.escape(self.publishes)}\.events"] if self.publishes else []),
        ]
        read_from = [re.escape(RPC_EXCHANGE), *([rf"({sources})\.events"] if sources else [])]
        return {
            "configure": anchored([*own_queues, *own_exchanges, *read_from]),
            "write": anchored([*own_queues, *own_exchanges, re.escape(RPC_EXCHANGE)]),
            "read": anchored([*own_queues, *own_exchanges, *read_from]),
        }

    def rpc_topic(self) -> dict[str, str]:
        """The topic permission on nameko-rpc: the keys it may publish with (its calls, replies) and bind
        with (its own requests, its replies)."""
        calls = [re.escape(call) for call in self.calls]
        return {
            "exchange": RPC_EXCHANGE,
            "write": anchored([*calls, REPLY_KEY]),
            "read": anchored([rf"{re.escape(self.service)}\.\*", REPLY_KEY]),
        }


def anchored(alternatives: list[str]) -> str:
    return "^(" + "|".join(alternatives) + ")$"


GATEWAY_CALLS = (
    "catalog.health", "catalog.list_catalog", "catalog.quote",
    "accounts.health", "accounts.register", "accounts.login", "accounts.resolve_session", "accounts.logout",
    "accounts.create_telegram_link", "accounts.unlink_telegram",
    "orders.health", "orders.create_order", "orders.get_order", "orders.list_orders", "orders.cancel_order",
    "payments.health", "payments.list_methods", "payments.create_order_payment", "payments.create_topup",
    "payments.create_extension_payment", "payments.get_payment", "payments.list_order_payments",
    "payments.list_payments_for_orders", "payments.list_topups", "payments.report_payment", "payments.get_balance",
    "payments.list_ledger", "payments.pay_with_balance", "payments.pay_extension_with_balance",
    "payments.list_reviews", "payments.resolve_review", "payments.set_method_enabled", "payments.get_topup",
    "payments.list_payment_outcomes",
    "provisioning.health", "provisioning.set_ssh_key", "provisioning.get_ssh_key", "provisioning.get_access",
    "provisioning.add_node", "provisioning.set_node_state", "provisioning.list_nodes",
    "support.health", "support.open_request", "support.list_requests", "support.list_extensions",
    "support.list_queue", "support.get_request", "support.answer_request", "support.confirm_extension",
    "support.refuse_extension", "support.confirm_configuration",
)  # fmt: skip

PRINCIPALS: tuple[Principal, ...] = (
    Principal("gateway", "gateway", calls=GATEWAY_CALLS),
    Principal("catalog", "catalog", consumes=("provisioning",)),
    Principal("accounts", "accounts", publishes="accounts"),
    Principal("orders", "orders", publishes="orders", consumes=("payments", "provisioning", "support"), calls=("catalog.quote",)),
    Principal(
        "payments", "payments", publishes="payments", consumes=("chain", "orders", "provisioning", "support"),
        calls=("provisioning.hold_capacity", "provisioning.release_hold", "orders.get_payable_order", "accounts.get_account"),
    ),
    Principal(
        "provisioning", "provisioning", publishes="provisioning", consumes=("orders", "payments", "support"),
        calls=("catalog.list_catalog", "orders.get_order", "accounts.get_account"),
    ),
    Principal(
        "support", "support", publishes="support", consumes=("payments", "provisioning"),
        calls=("catalog.quote", "orders.get_order", "orders.create_order", "payments.get_topup", "accounts.get_account"),
    ),
    Principal(
        "notify", "notify", consumes=("accounts", "orders", "payments", "provisioning", "support"),
        queues=("notify.events",),
    ),
    *(
        Principal(
            f"watcher-{network}", f"watcher_{network}", publishes="chain", consumes=("payments",),
            calls=("payments.watched_addresses",),
        )
        for network in WATCHED_NETWORKS
    ),
)  # fmt: skip


def principal(name: str) -> Principal:
    """The principal of a process (`payments`, `watcher-bitcoin`, `gateway`)."""
    return next(p for p in PRINCIPALS if p.name == name)
