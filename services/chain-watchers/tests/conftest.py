"""What the watcher tests of every chain share: watcher containers on the real broker and PostgreSQL, their
database and a tap on `chain.events`. A chain's conftest gives `watcher_settings` (which network, which node),
and where the shared fixtures below need them its node's `node_url`, `node_height` and `new_address`.

The flows through payments and orders are in tests/integration/chain_payments, which uses these fixtures.
"""

import uuid
from datetime import UTC, datetime, timedelta

import eventlet
import pytest
from kombu import Connection, Exchange, Queue
from nameko.rpc import rpc
from nameko.standalone.events import event_dispatcher
from sqlalchemy import text

from infra.devnet.fault_proxy import FaultProxy
from infra.devnet.nodes import AnvilNode, find_binary
from kernodeck_contracts.events import AddressWatched
from kernodeck_kit import migrations, testing
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_kit.units import MemoryUnits
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.dependencies import Watcher
from kernodeck_watchers.runtime import WatcherRuntime
from kernodeck_watchers.service import watcher_service

from .memory import memory_units

# Watchers under test react within a fraction of a second: short polls, retries and back-offs.
QUICK = {
    "poll_interval_s": 0.1,
    "standby_retry_s": 0.2,
    "status_interval_s": 0.2,
    "backoff_initial_s": 0.1,
    "backoff_max_s": 0.5,
    "rpc_timeout_s": 5,
    "payments_timeout_s": 5,
    # Lagging once 5 s behind (a node down, a pass stuck): the tests see it soon, a busy machine's pass does not.
    "max_lag_seconds": 5,
}


def wait_until(predicate, seconds: float = 20.0, what: str = "the condition"):
    """The kit's wait_until, 20 s unless told: a watcher's pass on a loaded machine can take seconds."""
    return testing.wait_until(predicate, seconds, what)


@pytest.fixture
def store(tmp_path):
    """A SQLite store migrated with the service's own scripts, for what only the database shows."""
    url = f"sqlite:///{tmp_path / 'watcher.db'}"
    migrations.upgrade("kernodeck_watchers", url)
    engine = make_engine(url)
    yield Store(engine, "chain", relay=None)
    engine.dispose()


@pytest.fixture
def units():
    """The watcher's unit on plain objects (tests/memory.py): the scanner, the journal and the runtime in
    milliseconds."""
    return memory_units()


class Events:
    """The events the scanner emitted, oldest first, as they leave through the outbox."""

    def __init__(self, units: MemoryUnits):
        self.units = units
        self.read = 0

    def all(self) -> list[dict]:
        return [{"type": event.type, **event.to_message()} for event in self.units.emitted]

    def new(self) -> list[dict]:
        """The events written since the last call."""
        every = self.all()
        fresh, self.read = every[self.read :], len(every)
        return fresh

    def kinds(self) -> list[tuple[str, str, int]]:
        """(type, txid, confirmations) of the new events."""
        return [(e["type"], e["txid"], e["confirmations"]) for e in self.new() if "txid" in e]


@pytest.fixture
def events(units) -> Events:
    """The scanner's events, read as tests go."""
    return Events(units)


@pytest.fixture(scope="session")
def devnet_installed():
    if not AnvilNode.installed():
        pytest.skip("anvil is not installed: run infra/devnet/install.sh anvil")
    if find_binary("solcjs") is None:
        pytest.skip("solcjs is not installed: run infra/devnet/install.sh solc")


@pytest.fixture
def quick_settings():
    """`quick_settings(network, database_url, **fields)`: a watcher's settings for tests, QUICK with `fields`
    (the node, confirmations...) on top."""

    def settings(network: str, database_url: str, **fields) -> WatcherSettings:
        # The local nodes answer from one process: nothing to read behind the tip for.
        quick = {**QUICK, f"{network}_tip_delay_blocks": 0}
        return WatcherSettings(network=network, database_url=database_url, **{**quick, **fields})

    return settings


@pytest.fixture
def wait():
    """`wait(predicate, seconds=20, what=...)`: poll until truthy (its value) or fail."""
    return wait_until


# --- the watcher ----------------------------------------------------------------


@pytest.fixture(scope="session")
def watcher_database(pg_database):
    return pg_database("kernodeck_watchers")


@pytest.fixture
def watcher_config(rabbit_config, watcher_database, watcher_settings) -> dict:
    truncate_all(watcher_database)
    return service_config(rabbit_config, watcher_database, watcher_settings)


@pytest.fixture
def start_watcher(container_factory, rabbit_config, watcher_database, watcher_config, watcher_settings):
    """`start_watcher(**settings)` -> a started watcher container (call again for another replica)."""

    def start(**changes):
        config = watcher_config
        if changes:
            config = service_config(rabbit_config, watcher_database, watcher_settings.model_copy(update=changes))
        container = container_factory(watcher_service(watcher_settings.network), config)
        container.start()
        return container

    return start


@pytest.fixture
def proxy(node_url):
    """A fault-injecting proxy in front of the chain's node, as a provider's load balancer (set its `fault`)."""
    with FaultProxy(node_url) as proxy:
        yield proxy


@pytest.fixture
def followed(node_height, watcher_db, watcher_settings, wait):
    """`followed()`: wait until the watcher has scanned up to the node's tip (less its tip delay): blocks then come
    one at a time, as the chain makes them, not in a burst that any watcher is behind for a moment."""

    def scanned_to_the_tip() -> None:
        # At or past it: a first scan may start at the tip, where the block below it was not there yet.
        wait(
            lambda: (watcher_db.cursor_height() or 0) >= node_height() - watcher_settings.tip_delay_blocks,
            what="the watcher to follow the tip",
        )

    return scanned_to_the_tip


@pytest.fixture
def watched(fake_payments, start_watcher, announce, watcher_db, new_address, followed, wait) -> str:
    """A watched address of a running watcher that has scanned up to the node's tip (less its tip delay)."""
    start_watcher()
    address = new_address()
    announce(address)
    wait(lambda: address in watcher_db.watched(), what="the watcher to store the address")
    followed()
    return address


class FakePayments:
    """payments' `watched_addresses` RPC, answering what a test put in `watched`."""

    name = "payments"
    watched: list[dict] = []

    @rpc
    def watched_addresses(self, network, after=None, limit=5000):
        return {"addresses": [entry for entry in self.watched if entry["network"] == network], "next": None}


@pytest.fixture
def fake_payments(container_factory, rabbit_config):
    FakePayments.watched = []
    container = container_factory(FakePayments, {**rabbit_config, "serializer": "json"})
    container.start()
    return FakePayments


@pytest.fixture
def announce(rabbit_config, watcher_settings):
    """`announce(address)` publishes payments' address_watched for it (the watcher's confirmations required)."""
    dispatch = event_dispatcher({**rabbit_config, "serializer": "json"})

    def publish(address: str, payment_id: str | None = None, token: str | None = None) -> AddressWatched:
        event = AddressWatched(
            network=watcher_settings.network,
            address=address,
            payment_id=payment_id or uuid.uuid4().hex,
            watch_until=datetime.now(UTC) + timedelta(days=1),
            required_confirmations=watcher_settings.confirmations,
            token=token,
        )
        dispatch(event.source, event.type, event.to_message())
        return event

    return publish


def runtime_of(container) -> WatcherRuntime:
    return next(dep for dep in container.dependencies if isinstance(dep, Watcher)).runtime


@pytest.fixture
def runtime():
    """`runtime(container)` -> that replica's WatcherRuntime (its lock, progress, watched set)."""
    return runtime_of


class Takeover:
    """Two replicas of a watcher; the active one is killed in the middle of a pass, held at a block it never
    finishes, and the standby takes over."""

    def __init__(self, start_watcher, runtime, watcher_db, wait, monkeypatch):
        self.start_watcher, self.runtime, self.watcher_db = start_watcher, runtime, watcher_db
        self.wait, self.monkeypatch = wait, monkeypatch
        self.reached = eventlet.event.Event()

    def start(self) -> None:
        """`active` takes the lock; `standby` starts, tries the lock and fails."""
        self.active = self.start_watcher()
        self.wait(lambda: self.runtime(self.active).lock.held, what="the first replica to take the lock")
        self.standby = self.start_watcher()
        tries = []  # the standby's attempts at the lock
        lock = self.runtime(self.standby).lock
        take_lock = lock.hold
        self.monkeypatch.setattr(lock, "hold", lambda: tries.append(take_lock()) or tries[-1])
        self.wait(lambda: len(tries) >= 2, what="the standby to try the lock")
        assert not any(tries)

    def hold_at(self, client_class, height: int) -> None:
        """The first scan of block `height` (by `client_class`) never ends."""
        self.held_height = height
        scan_block, never = client_class.transfers_in_block, eventlet.event.Event()

        def held_back_scan(client, block, watched):
            if block.height == height and not self.reached.ready():
                self.reached.send()
                never.wait()  # the active replica is killed here, in the middle of its pass
            return scan_block(client, block, watched)

        self.monkeypatch.setattr(client_class, "transfers_in_block", held_back_scan)

    def kill_the_active(self, start: int) -> None:
        """Once the active replica is held, the blocks from `start` to the held one written but not that one:
        kill it, and wait for the standby to take the lock."""
        self.wait(self.reached.ready, what="the active replica to scan the held block")
        assert start < self.watcher_db.cursor_height() < self.held_height
        self.active.kill()
        self.wait(lambda: self.runtime(self.standby).lock.held, seconds=5, what="the standby to take the lock")


@pytest.fixture
def takeover(start_watcher, runtime, watcher_db, wait, monkeypatch) -> Takeover:
    return Takeover(start_watcher, runtime, watcher_db, wait, monkeypatch)


class WatcherDb:
    def __init__(self, url: str, network: str):
        self.engine = make_engine(url, pool_size=2)
        self.network = network

    def rows(self, sql: str, **params) -> list[dict]:
        with self.engine.begin() as conn:
            return [dict(row._mapping) for row in conn.execute(text(sql), {"network": self.network, **params})]

    def cursor_height(self) -> int | None:
        found = self.rows("SELECT height FROM scan_cursor WHERE network = :network")
        return found[0]["height"] if found else None

    def scanned_heights(self) -> list[int]:
        return [
            r["height"] for r in self.rows("SELECT height FROM scanned_blocks WHERE network = :network ORDER BY height")
        ]

    def watched(self) -> set[str]:
        return {r["address"] for r in self.rows("SELECT address FROM watched_addresses WHERE network = :network")}

    def close(self) -> None:
        self.engine.dispose()


@pytest.fixture
def watcher_db(watcher_database, watcher_settings):
    db = WatcherDb(watcher_database, watcher_settings.network)
    yield db
    db.close()


class ChainTap:
    """A queue of its own on `chain.events`: every event the watchers publish, in order."""

    def __init__(self, amqp_uri: str):
        self.connection = Connection(amqp_uri)
        queue = Queue(
            f"test-chain-tap-{uuid.uuid4().hex}",
            exchange=Exchange("chain.events", type="topic", durable=True),
            routing_key="#",
            exclusive=True,
        )
        self.queue = queue(self.connection.channel())
        self.queue.declare()
        self.seen: list[dict] = []

    def events(self, event_type: str | None = None) -> list[dict]:
        while (message := self.queue.get(no_ack=True, accept=["json"])) is not None:
            self.seen.append({"type": message.delivery_info["routing_key"], **message.payload})
        return [e for e in self.seen if event_type is None or e["type"] == event_type]

    def transfers(self, txid: str | None = None) -> list[dict]:
        return [e for e in self.events() if "txid" in e and txid in (None, e["txid"])]

    def distinct_transfers(self) -> list[dict]:
        """The transfer events, each once, numbered by the watchers without a gap. The outbox delivers at least
        once: a row published just before a kill, not yet marked sent, goes out again from the standby with the
        same event_id, which consumers drop."""
        transfers = list({e["event_id"]: e for e in self.transfers()}.values())
        assert sorted(e["sequence"] for e in transfers) == list(range(1, len(transfers) + 1))
        return transfers

    def lagging_reported(self) -> bool:
        """Whether any status so far said lagging (there must be some: silence says nothing)."""
        statuses = self.events("watcher_status")
        assert statuses, "no watcher_status yet"
        return any(status["lagging"] for status in statuses)

    def wait_for(self, event_type: str, seconds: float = 20.0, **fields) -> dict:
        """The first `event_type` event whose payload has these field values."""

        def found():
            return next((e for e in self.events(event_type) if all(e[k] == v for k, v in fields.items())), None)

        return wait_until(found, seconds, f"{event_type} {fields}")

    def close(self) -> None:
        self.connection.release()


@pytest.fixture
def tap(rabbit_config):
    tap = ChainTap(rabbit_config["AMQP_URI"])
    yield tap
    tap.close()
