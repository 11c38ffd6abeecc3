"""Notify's tests: pure rules and use cases in memory; the process on the real broker, PostgreSQL and a Bot API double.

These run under asyncio (`pytest -p no:pytest_nameko`), never under the
kit's eventlet plugin: notify is an asyncio process.
"""

import json
import os
import re
import secrets
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlmodel import SQLModel

from infra.devnet.telegram_double import TelegramDouble
from infra.local.isolation import temporary_databases, temporary_vhost
from infra.local.stack import BIN, Process, free_port
from kernodeck_contracts.events import Event, TelegramLinkRequested, telegram_token_hash
from kernodeck_kit.db import make_engine
from kernodeck_kit.tables import OutboxMessage
from kernodeck_kit.transport.publish import amqp_publisher
from kernodeck_notify import store as tables  # noqa: F401  (registers notify's tables)

PUBLIC_URL = "https://kernodeck.example"


def publish(amqp_uri: str, *events: Event) -> None:
    """Publish as every service's outbox does (nameko's event exchange and routing)."""
    send = amqp_publisher(amqp_uri)
    for event in events:
        payload = json.dumps(event.to_message())
        send(OutboxMessage(event_id=event.event_id, source=event.source, event_type=event.type, payload=payload))


def link_request(account_id: str, language: str = "en", minutes: float = 10) -> tuple[str, TelegramLinkRequested]:
    """A deep link's token, and the event accounts emits for it."""
    token = secrets.token_urlsafe(32)
    expires_at = datetime.now(UTC) + timedelta(minutes=minutes)
    return token, TelegramLinkRequested(
        account_id=account_id, token_hash=telegram_token_hash(token), expires_at=expires_at, language=language
    )


class Notify:
    """`kernodeck-notify` as a real process, on its own vhost and database, speaking to `double`."""

    def __init__(self, amqp_uri: str, database_url: str, double: TelegramDouble, log_path: Path, **settings):
        self.amqp_uri, self.double, self.log_path = amqp_uri, double, log_path
        self.metrics_port = free_port()
        self.env = {
            **os.environ,
            "AMQP_URI": amqp_uri,
            "NOTIFY_DATABASE_URL": database_url,
            "NOTIFY_BOT_TOKEN": double.token,
            "NOTIFY_TELEGRAM_API_URL": double.url,
            "NOTIFY_METRICS_PORT": str(self.metrics_port),
            "KERNODECK_PUBLIC_URL": PUBLIC_URL,
            "NOTIFY_POLL_TIMEOUT_S": "1",
            # Fast enough for tests; the defaults are Telegram's limits.
            "NOTIFY_CHAT_INTERVAL_S": "0.05",
            "NOTIFY_RETRY_FIRST_S": "0.05",
            "NOTIFY_RETRY_MAX_S": "0.4",
            **{f"NOTIFY_{key.upper()}": str(value) for key, value in settings.items()},
        }
        self.process: Process | None = None

    def start(self) -> "Notify":
        self.process = Process("notify", [str(BIN / "kernodeck-notify")], self.env, self.log_path)
        self.process.start()
        deadline = time.monotonic() + 30
        while self.metric("kernodeck_notify_ready") != 1:
            assert self.process.running(), self.log_path.read_text()[-3000:]
            assert time.monotonic() < deadline, "notify did not get ready"
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()

    def kill(self) -> None:
        self.process.popen.kill()
        self.process.popen.wait()

    def metrics(self) -> str:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=2) as response:
                return response.read().decode()
        except OSError:
            return ""

    def metric(self, name: str, labels: str = "") -> float:
        """A sample's value (the sum over its label sets when `labels` is empty); 0 when absent."""
        pattern = (
            rf"^{re.escape(name)}(\{{{re.escape(labels)}\}})? (\S+)$"
            if labels
            else rf"^{re.escape(name)}(\{{.*\}})? (\S+)$"
        )
        return sum(float(match[1]) for match in re.findall(pattern, self.metrics(), flags=re.MULTILINE))

    def link(self, chat_id: int, account_id: str, language: str = "en") -> None:
        """Link `chat_id` to `account_id` as a customer does: the link event, then /start with its token."""
        token, event = link_request(account_id, language)
        publish(self.amqp_uri, event)
        deadline = time.monotonic() + 10
        while True:  # the event may still be on its way when /start arrives: try again, as a customer would
            answered = len(self.double.api.messages(chat_id)) + 1
            self.double.api.user_says(chat_id, f"/start {token}")
            assert self.double.api.wait_for(lambda n=answered: len(self.double.api.messages(chat_id)) >= n)
            if self.double.api.messages(chat_id)[-1].text == reply(language, "linked"):
                return
            assert time.monotonic() < deadline, "the chat could not be linked"
            time.sleep(0.1)


def reply(language: str, kind: str) -> str:
    from kernodeck_notify.templates import text

    return text(language, kind)


@pytest.fixture(scope="session")
def postgres_url():
    with temporary_databases(("notify",), prefix="kd_notify") as urls:
        yield urls["notify"]


@pytest.fixture
def vhost():
    with temporary_vhost("kd_notify") as amqp_uri:
        yield amqp_uri


@pytest.fixture
def double():
    with TelegramDouble() as double:
        yield double


@pytest.fixture
def fresh_postgres(postgres_url):
    """The session's PostgreSQL database, emptied of notify's rows (the schema stays, migrated)."""
    engine = make_engine(postgres_url)
    try:
        with engine.begin() as conn:
            names = [t.name for t in SQLModel.metadata.sorted_tables if t.name in conn.dialect.get_table_names(conn)]
            if names:
                conn.exec_driver_sql(f"TRUNCATE {', '.join(names)} RESTART IDENTITY")
    finally:
        engine.dispose()
    return postgres_url


@pytest.fixture
def notify_factory(vhost, double, tmp_path):
    started: list[Notify] = []

    def make(database_url: str, **settings) -> Notify:
        notify = Notify(vhost, database_url, double, tmp_path / f"notify-{len(started)}.log", **settings)
        started.append(notify)
        return notify

    yield make
    for notify in started:
        notify.stop()
