"""Telegram deep links: one-time tokens kept as hashes, announced to notify, limited per account."""

import time
import uuid
from datetime import datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from kombu import Connection, Exchange, Queue
from nameko.standalone.rpc import ServiceRpcProxy
from pydantic import ValidationError
from sqlmodel import select

from kernodeck_accounts.telegram_links import TelegramLinkPolicy, TelegramLinkRow
from kernodeck_contracts.events import TelegramLinkRequested, TelegramUnlinkRequested, telegram_token_hash
from kernodeck_kit.testing import service_config

PASSWORD = "correct horse battery staple"
BOT = "kernodeck_test_bot"


@pytest.fixture
def linking(start, config, rabbit_config, database_url, policy):
    settings = policy.model_copy(update={"telegram_bot_username": BOT, "telegram_link_limit": 3})
    config = service_config(rabbit_config, database_url, settings)
    start(config)
    with ServiceRpcProxy("accounts", config) as proxy:
        yield proxy


@pytest.fixture
def announced(config):
    """accounts' events, as notify receives them: `announced(count)` -> the first `count` bodies."""
    with Connection(config["AMQP_URI"]) as connection:
        queue = Queue(f"tap-{uuid.uuid4().hex}", Exchange("accounts.events", type="topic", durable=True), "#")
        queue = queue(connection)
        queue.declare()

        def take(count: int = 1) -> list[tuple[str, dict]]:
            received, deadline = [], time.monotonic() + 5
            while len(received) < count and time.monotonic() < deadline:
                message = queue.get(no_ack=True)
                if message is None:
                    time.sleep(0.05)
                else:
                    received.append((message.delivery_info["routing_key"], message.payload))
            return received

        yield take
        queue.delete()


def customer(proxy) -> str:
    return proxy.register(
        first_name="Lan",
        last_name="Nguyen",
        email=f"{uuid.uuid4().hex}@example.org",
        password=PASSWORD,
        client_address=f"2001:db8:{uuid.uuid4().int % 65536:x}::1",
    )["id"]


def test_a_link_is_a_t_me_deep_link_whose_token_only_notify_can_bind(linking, announced, db):
    account_id = customer(linking)
    link = linking.create_telegram_link(account_id, "vi")
    url = urlsplit(link["url"])
    (token,) = parse_qs(url.query)["start"]
    assert (url.scheme, url.netloc, url.path) == ("https", "t.me", f"/{BOT}")
    assert len(token) >= 40 and set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

    [(routing_key, body)] = announced()
    event = TelegramLinkRequested.from_message(body)
    assert routing_key == "telegram_link_requested"
    assert (event.account_id, event.token_hash, event.language) == (account_id, telegram_token_hash(token), "vi")
    assert event.expires_at == datetime.fromisoformat(link["expires_at"])
    assert timedelta(minutes=14) < event.expires_at - event.occurred_at <= timedelta(minutes=15)
    stored = db.exec(select(TelegramLinkRow)).all()
    assert [row.token_hash for row in stored] == [event.token_hash] and token not in str(stored[0])


def test_each_link_is_new(linking):
    account_id = customer(linking)
    assert (
        linking.create_telegram_link(account_id, "en")["url"] != linking.create_telegram_link(account_id, "en")["url"]
    )


def test_links_are_limited_per_account_and_window(linking, remote_errors):
    account_id, other = customer(linking), customer(linking)
    for _ in range(3):
        linking.create_telegram_link(account_id, "en")
    with pytest.raises(remote_errors) as refused:
        linking.create_telegram_link(account_id, "en")
    assert refused.value.code == "too_many_requests" and 0 < refused.value.retry_after <= 3600
    assert linking.create_telegram_link(other, "en")["url"]


@pytest.mark.parametrize("language", ["fr", "", None, "EN"])
def test_a_language_other_than_en_vi_id_is_refused(linking, remote_errors, language):
    with pytest.raises(remote_errors) as refused:
        linking.create_telegram_link(customer(linking), language)
    assert refused.value.code == "validation_error" and refused.value.errors[0]["field"] == "language"


def test_an_unknown_account_gets_no_link(linking, remote_errors):
    with pytest.raises(remote_errors) as refused:
        linking.create_telegram_link("0" * 32, "en")
    assert refused.value.code == "not_found"


def test_without_a_bot_no_link_is_offered(accounts, remote_errors):
    with pytest.raises(remote_errors) as refused:
        accounts.create_telegram_link(customer(accounts), "en")
    assert refused.value.code == "service_unavailable"


def test_unlinking_is_announced_to_notify(linking, announced):
    account_id = customer(linking)
    linking.unlink_telegram(account_id)
    [(routing_key, body)] = announced()
    assert routing_key == "telegram_unlink_requested"
    assert TelegramUnlinkRequested.from_message(body).account_id == account_id


@pytest.mark.parametrize("username", ["kernodeck_bot", "@Kernodeck_Bot", "abcbot", "a" * 29 + "bot"])
def test_bot_usernames_telegram_accepts(username):
    assert TelegramLinkPolicy(telegram_bot_username=username).telegram_bot_username == username.removeprefix("@")


@pytest.mark.parametrize("username", ["kernodeck", "abot", "a" * 30 + "bot", "kernodeck-bot", "kernodeck bot"])
def test_bot_usernames_telegram_refuses(username):
    with pytest.raises(ValidationError):
        TelegramLinkPolicy(telegram_bot_username=username)


@pytest.mark.parametrize(("seconds", "valid"), [(59, False), (60, True), (86400, True), (86401, False)])
def test_the_link_lifetime_boundaries(seconds, valid):
    if valid:
        assert TelegramLinkPolicy(telegram_link_ttl_s=seconds).telegram_link_ttl_s == seconds
    else:
        with pytest.raises(ValidationError):
            TelegramLinkPolicy(telegram_link_ttl_s=seconds)
