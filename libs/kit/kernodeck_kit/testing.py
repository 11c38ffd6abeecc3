"""pytest plugin for service tests: `pytest -p kernodeck_kit.testing ...`.

Loaded as a plugin so that eventlet patches the process before anything
else imports sockets. Gives each test session fresh PostgreSQL databases
(migrated with the service's own Alembic scripts) and each test clean
tables; nameko's own plugin gives the broker vhost (`rabbit_config`).
"""

from kernodeck_kit import green

green.patch()

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Iterator, Sequence  # noqa: E402
from contextlib import contextmanager  # noqa: E402

import eventlet  # noqa: E402
import pytest  # noqa: E402
from alembic import command  # noqa: E402
from kombu import Connection, Exchange, Queue  # noqa: E402
from sqlalchemy import Table, create_engine, inspect, text  # noqa: E402
from sqlmodel import SQLModel  # noqa: E402

from kernodeck_kit import migrations  # noqa: E402
from kernodeck_kit.db import make_engine, normalize_url  # noqa: E402
from kernodeck_kit.settings import ServiceSettings  # noqa: E402
from kernodeck_kit.tables import OutboxMessage, ProcessedEvent  # noqa: E402

PG_ADMIN_URL = os.environ.get("KERNODECK_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def pytest_configure(config):
    config.option.suppress_eventlet_notification = True


@pytest.fixture(scope="session")
def pg_database():
    """`pg_database(package)` -> URL of a new database migrated to `package`'s head.

    `pg_database(tables=[...])` -> one holding only the kit's own tables and
    those `Table`s, for a test of a few tables without a service's migrations.
    """
    admin = create_engine(normalize_url(PG_ADMIN_URL), isolation_level="AUTOCOMMIT")
    created = []

    def make(package: str | None = None, tables: Sequence[Table] = ()) -> str:
        if package and tables:
            raise ValueError("a migrated database has the tables of its migrations")
        name = f"kd_test_{(package or 'kit').removeprefix('kernodeck_')}_{uuid.uuid4().hex[:8]}"
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        created.append(name)
        url = admin.url.set(database=name).render_as_string(hide_password=False)
        if package:
            migrations.upgrade(package, url)
        else:
            engine = make_engine(url)
            SQLModel.metadata.create_all(engine, tables=[OutboxMessage.__table__, ProcessedEvent.__table__, *tables])
            engine.dispose()
        return url

    yield make
    with admin.connect() as conn:
        for name in created:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["postgresql", "sqlite"])
def database_at(request, tmp_path):
    """`database_at(package, revision)` -> URL of a `package` database at an older `revision`, to test the
    migrations after it on: the test runs on PostgreSQL and on SQLite."""
    pg_database = request.getfixturevalue("pg_database") if request.param == "postgresql" else None

    def make(package: str, revision: str) -> str:
        if pg_database is None:
            url = f"sqlite:///{tmp_path / package}.db"
        else:
            url = pg_database(package)
            command.downgrade(migrations.alembic_config(package, url), "base")
        command.upgrade(migrations.alembic_config(package, url), revision)
        return url

    return make


# In a process of its own: run with other suites, a test process's SQLModel metadata holds their tables too.
_ALEMBIC_CHECK = (
    "import sys; from alembic import command; from kernodeck_kit.migrations import alembic_config; "
    "command.check(alembic_config(sys.argv[1], sys.argv[2]))"
)


def assert_schema_is_the_models(package: str, url: str) -> None:
    """The database at `url` has the schema of `package`'s models (alembic check finds nothing to migrate)."""
    check = subprocess.run([sys.executable, "-c", _ALEMBIC_CHECK, package, url], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def truncate_all(url: str) -> None:
    engine = make_engine(url)
    try:
        tables = [t for t in inspect(engine).get_table_names() if t != "alembic_version"]
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()


def service_config(rabbit_config: dict, database_url: str, settings: ServiceSettings | None = None) -> dict:
    """A container's config on the test's vhost and database, with `settings` (the broker is the test's)."""
    return {
        **(settings.nameko_config() if settings is not None else {}),
        **rabbit_config,
        "serializer": "json",
        "DATABASE_URL": database_url,
        "OUTBOX_RELAY_INTERVAL_S": 0.2,
    }


def wait_until(predicate, seconds: float = 10.0, what: str = "the condition"):
    """Poll `predicate` every 20 ms; its first truthy value, or AssertionError after `seconds`."""
    deadline = time.monotonic() + seconds
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds}s waiting for {what}")
        eventlet.sleep(0.02)
    return value


class EventTap:
    """What reaches a queue bound to every event one service publishes, each event once (the outbox publishes at
    least once)."""

    def __init__(self, queue):
        self.queue = queue
        self.received: list[tuple[str, dict]] = []
        self.event_ids: set[str] = set()

    def of(self, event_type: str) -> list[dict]:
        """Payloads of `event_type` received so far, the queue emptied first."""
        while (message := self.queue.get(no_ack=True)) is not None:
            if message.payload["event_id"] not in self.event_ids:
                self.event_ids.add(message.payload["event_id"])
                self.received.append((message.delivery_info["routing_key"], message.payload))
        return [payload for key, payload in self.received if key == event_type]

    def wait(self, event_type: str, count: int = 1, seconds: float = 5.0) -> list[dict]:
        """Payloads of `event_type` received so far, once there are `count` or `seconds` have passed."""
        deadline = time.monotonic() + seconds
        while len(matching := self.of(event_type)) < count and time.monotonic() < deadline:
            eventlet.sleep(0.05)
        return matching

    def wait_for(self, event_type: str, count: int = 1, seconds: float = 10.0) -> list[dict]:
        """As `wait`, but an AssertionError when fewer than `count` came."""
        matching = self.wait(event_type, count, seconds)
        assert len(matching) >= count, f"{len(matching)} {event_type} event(s) after {seconds}s, not {count}"
        return matching


@contextmanager
def tap_events(amqp_uri: str, source: str) -> Iterator[EventTap]:
    """An EventTap on `source`'s events, on a queue of its own that lives as long as the block."""
    exchange = Exchange(f"{source}.events", type="topic", durable=True)
    with Connection(amqp_uri) as connection:
        queue = Queue(f"test-tap-{uuid.uuid4().hex}", exchange, routing_key="#", exclusive=True)(connection)
        queue.declare()
        yield EventTap(queue)
