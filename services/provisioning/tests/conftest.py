"""The provisioning service as a real container on the broker and PostgreSQL, with real SSH test hosts."""

import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import eventlet
import pytest
from nameko.rpc import rpc
from nameko.standalone.events import event_dispatcher
from nameko.testing.services import replace_dependencies

from infra.testhosts.hosts import TestHost, admin_key, can_run_hosts, netns_allowed
from kernodeck_contracts.events import OrderCreated, OrderStatusChanged
from kernodeck_contracts.rpc import CatalogListing, ListedModel, LotBounds
from kernodeck_kit.operators import CommandRpcProxy
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_provisioning.config import ProvisioningSettings
from kernodeck_provisioning.crypto import new_key
from kernodeck_provisioning.service import ProvisioningService

# (id, backend, GPUs per lot): what provisioning reads of the catalog's models.
MODELS = [("h100", "cuda", 1), ("mi300x", "rocm", 1)]


class CatalogDouble:
    """The catalog's list_catalog answer, a contracts `CatalogListing` of MODELS."""

    name = "catalog"

    @rpc
    def list_catalog(self):
        models = [
            ListedModel(
                id=model_id, name=model_id, vendor="", backend=backend, memory_gb_per_gpu=80,
                gpus_per_lot=gpus_per_lot, lot_prices_cents={"3": 18900}, available_lots=0, held_lots=0,
            )
            for model_id, backend, gpus_per_lot in MODELS
        ]  # fmt: skip
        return CatalogListing(
            models=models, durations_days=[3], lots=LotBounds(min=1, max=10), preparations=[]
        ).model_dump()


class OrdersDouble:
    """orders' get_order answer (the fields provisioning reads), for orders whose OrderCreated never came."""

    name = "orders"
    known: dict[str, dict] = {}

    @rpc
    def get_order(self, account_id, order_id):
        return OrdersDouble.known[order_id]


class MovableClock:
    def __init__(self):
        self.offset = timedelta()

    def __call__(self):
        return datetime.now(UTC) + self.offset


@pytest.fixture(scope="session")
def database_url(pg_database):
    return pg_database("kernodeck_provisioning")


@pytest.fixture(scope="session")
def keys(tmp_path_factory):
    return admin_key(tmp_path_factory.mktemp("provisioning-keys"))


@pytest.fixture
def hold_settings() -> dict:
    """The limits on unpaid holds: room for a test's one account to hold every GPU of its hosts (a module that
    tests the limits overrides this fixture)."""
    return {"held_gpus_per_account": 1000, "newcomers_held_percent": 100}


@pytest.fixture
def config(rabbit_config, database_url, keys, hold_settings):
    truncate_all(database_url)
    settings = ProvisioningSettings(
        environment="development",
        accept_gpu_double=True,
        secret_key=new_key(),
        ssh_key_path=str(keys[0]),
        ssh_connect_timeout_s=3,
        sweep_interval_s=0.2,
        capacity_sync_s=3600,
        **hold_settings,
    )
    return service_config(rabbit_config, database_url, settings)


@pytest.fixture
def clock():
    return MovableClock()


@pytest.fixture
def orders_double():
    OrdersDouble.known = {}
    return OrdersDouble


@pytest.fixture
def provisioning(container_factory, config, clock, orders_double):
    container_factory(CatalogDouble, config).start()
    container_factory(OrdersDouble, config).start()
    container = container_factory(ProvisioningService, config)
    replace_dependencies(container, clock=clock)
    container.start()
    with CommandRpcProxy(config, "cli:tests") as cluster:  # operator RPCs among them: as the command
        yield cluster.provisioning


@pytest.fixture
def test_hosts(tmp_path, keys):
    """`test_hosts(gpus=.., backend=.., mode=.., modify_device_files=..)` starts one more SSH test host; all stop
    after the test."""
    if reason := can_run_hosts():
        pytest.skip(reason)
    use_netns = netns_allowed()
    started = []

    def start(gpus=4, backend="cuda", mode="ok", modify_device_files=False) -> TestHost:
        host = TestHost(uuid.uuid4().hex[:6], tmp_path / f"host{len(started)}", gpus, backend, mode, use_netns)
        host.modify_device_files = modify_device_files
        host.prepare(keys[1])
        started.append(host)
        host.start()
        return host

    yield start
    for host in started:
        host.stop()


@pytest.fixture
def orders_events(config):
    """`paid(order_id, model, lots, preparation, key)`: what orders says when an order is created and paid."""
    dispatch = event_dispatcher(config)

    def created(order_id, model="h100", gpus=1, preparation="pytorch", key=None, days=3) -> OrderCreated:
        event = OrderCreated(
            order_id=order_id,
            account_id="acct",
            model_id=model,
            duration_days=days,
            lots=gpus,
            total_gpus=gpus,
            preparation=preparation,
            total_usd_cents=1000,
            ssh_public_key=key,
        )
        dispatch(event.source, event.type, event.to_message())
        return event

    def paid(order_id):
        event = OrderStatusChanged(
            order_id=order_id, account_id="acct", status="paid", previous_status="awaiting_payment"
        )
        dispatch(event.source, event.type, event.to_message())

    return created, paid


def wait_until(predicate, what: str, seconds: float = 30.0):
    with eventlet.Timeout(seconds, TimeoutError(f"waited {seconds} s for {what}")):
        while True:
            value = predicate()
            if value:
                return value
            eventlet.sleep(0.05)


def customer_key(folder: Path) -> tuple[Path, str]:
    private = folder / f"customer_{uuid.uuid4().hex[:6]}"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(private)], check=True)
    return private, Path(f"{private}.pub").read_text().strip()
