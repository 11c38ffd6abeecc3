"""Least privilege on the bus, on the real broker: each process kind's user (kernodeck_kit.bus_permissions,
written by `kernodeck-admin broker apply` as the Kubernetes job and `make run` write it) may do its job and
no more. The gateway's credentials cannot publish a chain event, nor reach a queue through the default
exchange; a watcher's cannot call an operator RPC; no user reads another's queue. That the users may do
their jobs is what every end-to-end and browser test shows: their stacks run each process as its own user.

The table is checked against the code too: every RPC a service or the gateway calls and every event source
a service handles is in its principal's entry."""

import json
import re
import time
import uuid
from pathlib import Path

import amqp
import httpx
import pytest
from nameko.events import EventHandler
from nameko.rpc import RpcProxy

from kernodeck_contracts import clients
from kernodeck_kit.bus_permissions import GATEWAY_CALLS, PRINCIPALS, principal
from kernodeck_kit.bus_users import apply, local_password, uri_for
from kernodeck_kit.transport.peers import Peer

ROOT = Path(__file__).resolve().parents[2]
ACCESS_REFUSED = 403


@pytest.fixture
def users(request, rabbit_config):
    apply(request.config.getoption("RABBIT_API_URI"), rabbit_config["vhost"], local_password)
    setup = amqp.Connection(**connection_args(rabbit_config["AMQP_URI"]))
    setup.connect()
    channel = setup.channel()
    for exchange in ("chain.events", "payments.events", "nameko-rpc"):  # as their services declare them
        channel.exchange_declare(exchange, "topic", durable=True, auto_delete=False)
    channel.queue_declare("rpc-payments", durable=True, auto_delete=False)
    channel.queue_bind("rpc-payments", "nameko-rpc", "payments.*")
    channel.queue_declare(
        "evt-chain-transfer_confirmed--payments.on_transfer_confirmed", durable=True, auto_delete=False
    )
    setup.close()
    return rabbit_config["AMQP_URI"]


def connection_args(uri: str) -> dict:
    match = re.match(r"\w+://([^:]+):([^@]+)@([^/]+)/(.*)", uri)
    user, password, host, vhost = match.groups()
    # confirm_publish: basic_publish waits for the broker's answer, a refusal included
    return {"host": host, "userid": user, "password": password, "virtual_host": vhost or "/", "confirm_publish": True}


def as_user(base_uri: str, name: str) -> amqp.Connection:
    connection = amqp.Connection(**connection_args(uri_for(base_uri, name, local_password(name))))
    connection.connect()
    return connection


def refused(action) -> int:
    """The broker's reply code when it refuses `action` (it closes the channel), else 0."""
    try:
        action()
    except amqp.exceptions.AccessRefused as error:
        return error.reply_code
    return 0


def publish(connection: amqp.Connection, exchange: str, routing_key: str, body: dict) -> None:
    connection.channel().basic_publish(
        amqp.Message(json.dumps(body), content_type="application/json"), exchange, routing_key
    )


def test_the_gateways_credentials_cannot_publish_a_chain_event(users):
    event = {"event_id": str(uuid.uuid4()), "network": "bitcoin", "txid": "ab" * 32, "amount": "1000000"}
    with as_user(users, "gateway") as gateway:
        assert refused(lambda: publish(gateway, "chain.events", "transfer_confirmed", event)) == ACCESS_REFUSED
        assert refused(lambda: publish(gateway, "payments.events", "payment_settled", event)) == ACCESS_REFUSED
        # Nor straight into payments' queue of chain events through the default exchange.
        queue = "evt-chain-transfer_confirmed--payments.on_transfer_confirmed"
        assert refused(lambda: publish(gateway, "", queue, event)) == ACCESS_REFUSED
        # What it is for: calling the API's RPCs.
        assert refused(lambda: publish(gateway, "nameko-rpc", "payments.get_balance", {"args": [], "kwargs": {}})) == 0
    with as_user(users, "watcher-bitcoin") as watcher:  # a watcher does publish chain events
        assert refused(lambda: publish(watcher, "chain.events", "transfer_confirmed", event)) == 0


def test_a_watchers_credentials_cannot_call_an_operator_rpc(users):
    call = {"args": ["cli:x", "review-1", "credit_to_balance", 100000, ""], "kwargs": {}}
    with as_user(users, "watcher-ethereum") as watcher:
        assert refused(lambda: publish(watcher, "nameko-rpc", "payments.resolve_review", call)) == ACCESS_REFUSED
        assert refused(lambda: publish(watcher, "nameko-rpc", "payments.set_method_enabled", call)) == ACCESS_REFUSED
        assert refused(lambda: publish(watcher, "nameko-rpc", "provisioning.add_node", call)) == ACCESS_REFUSED
        # What it is for: the addresses payments watches.
        assert refused(lambda: publish(watcher, "nameko-rpc", "payments.watched_addresses", call)) == 0


def test_no_user_reads_anothers_queue_nor_binds_to_its_requests(users):
    with as_user(users, "gateway") as gateway:
        assert refused(lambda: gateway.channel().basic_get("rpc-payments")) == ACCESS_REFUSED
    with as_user(users, "orders") as orders:
        # A queue named as its own, bound to receive payments' requests: refused by the topic permission.
        def snoop():
            channel = orders.channel()
            channel.queue_declare("rpc-orders", durable=True, auto_delete=False)
            channel.queue_bind("rpc-orders", "nameko-rpc", "payments.*")

        assert refused(snoop) == ACCESS_REFUSED


def rpc_proxies(service_cls) -> set[str]:
    return {v.target_service for v in vars(service_cls).values() if isinstance(v, RpcProxy)}


def handled_sources(service_cls) -> set[str]:
    return {
        ep.source_service
        for attr in dir(service_cls)
        for ep in getattr(getattr(service_cls, attr), "nameko_entrypoints", ()) or ()
        if isinstance(ep, EventHandler)
    }


def test_the_table_covers_every_rpc_and_event_source_the_code_uses():
    from kernodeck_accounts.service import AccountsService
    from kernodeck_catalog.service import CatalogService
    from kernodeck_orders.service import OrdersService
    from kernodeck_payments.service import PaymentsService
    from kernodeck_provisioning.service import ProvisioningService
    from kernodeck_support.service import SupportService
    from kernodeck_watchers.service import WatcherService

    services = {
        "catalog": CatalogService, "accounts": AccountsService, "orders": OrdersService,
        "payments": PaymentsService, "provisioning": ProvisioningService, "support": SupportService,
        "watcher-bitcoin": WatcherService,
    }  # fmt: skip
    for name, cls in services.items():
        entry = principal(name)
        package = Path(__import__(cls.__module__).__file__).parent
        code = "\n".join(p.read_text() for p in package.rglob("*.py"))
        called = {  # self.<peer>.<method>(, or through a copy of the peer's client named as it is
            f"{peer.client.service}.{method}"
            for attr, peer in vars(cls).items()
            if isinstance(peer, Peer)
            for method in clients.rpc_methods(peer.client)
            if re.search(rf"\b{attr}\.(using\([^)]*\)\.)?{method}\(", code)
        }
        assert called <= set(entry.calls), f"{name} calls what its user may not: {called - set(entry.calls)}"
        assert {c.split(".")[0] for c in entry.calls} <= rpc_proxies(cls), f"{name}: calls listed it never makes"
        assert handled_sources(cls) == set(entry.consumes), name
    gateway = "\n".join(p.read_text() for p in (ROOT / "gateway" / "kernodeck_gateway").rglob("*.py"))
    used = {f"{s}.{m}" for s, m in re.findall(r'rpc\.call\(\s*"(\w+)",\s*"(\w+)"', gateway)}
    used |= typed_calls(gateway)
    assert used == set(GATEWAY_CALLS)
    assert len({p.user for p in PRINCIPALS}) == len(PRINCIPALS)


def test_production_vhost_makes_quorum_queues_and_dead_letters_what_queues_reject(request):
    api_url = request.config.getoption("RABBIT_API_URI")
    vhost = f"kd_prod_{uuid.uuid4().hex[:8]}"
    api = httpx.Client(base_url=f"{api_url}/api", auth=("guest", "guest"))
    try:
        apply(api_url, vhost, local_password, create=True)
        with as_user(f"amqp://guest:guest@127.0.0.1:5672/{vhost}", "payments") as payments:
            payments.channel().queue_declare("rpc-payments", durable=True, auto_delete=False)  # as nameko does
        deadline = time.monotonic() + 10
        while (queue := api.get(f"/queues/{vhost}/rpc-payments").json()).get("policy") is None:  # stats lag
            assert time.monotonic() < deadline, queue
            time.sleep(0.2)
        assert (queue["type"], queue["policy"]) == ("quorum", "dead-letters")
    finally:
        api.delete(f"/vhosts/{vhost}")


def typed_calls(code: str) -> set[str]:
    """The `service.method` calls `code` makes through the typed clients (kernodeck_contracts.clients) it uses:
    each method of a client it names that it calls."""
    used = set()
    for client in clients.CLIENTS:
        if client.__name__ in code:
            methods = clients.rpc_methods(client)
            used |= {f"{client.service}.{method}" for method in methods if re.search(rf"\.{method}\(", code)}
    return used
