"""Notify's settings: Telegram's limits as defaults, no limit above them, a token required to start."""

import pytest
from pydantic import ValidationError

from kernodeck_notify.config import NotifySettings

pytestmark = pytest.mark.unit


def test_defaults_are_telegram_s_documented_limits():
    settings = NotifySettings()
    assert (settings.max_per_second, settings.chat_interval_s, settings.group_interval_s) == (30, 1.0, 3.0)
    assert (settings.service_name, settings.metrics_port) == ("notify", 9106)
    assert settings.telegram_api_url == "https://api.telegram.org"


def test_the_environment_sets_them(monkeypatch):
    monkeypatch.setenv("NOTIFY_BOT_TOKEN", "123:abc")
    monkeypatch.setenv("KERNODECK_PUBLIC_URL", "https://kernodeck.example/")
    monkeypatch.setenv("NOTIFY_DATABASE_URL", "postgresql://notify@db/notify")
    settings = NotifySettings()
    assert settings.token() == "123:abc" and "123:abc" not in repr(settings)
    assert settings.public_url == "https://kernodeck.example"
    assert settings.resolved_database_url() == "postgresql://notify@db/notify"


def test_no_token_no_start():
    with pytest.raises(SystemExit, match="NOTIFY_BOT_TOKEN"):
        NotifySettings().token()


@pytest.mark.parametrize(("value", "valid"), [(0, False), (1, True), (30, True), (31, False)])
def test_the_overall_rate_stays_within_telegram_s(value, valid):
    if valid:
        assert NotifySettings(max_per_second=value).max_per_second == value
    else:
        with pytest.raises(ValidationError):
            NotifySettings(max_per_second=value)


@pytest.mark.parametrize("url", ["api.telegram.org", "ftp://api.telegram.org", ""])
def test_addresses_are_http_urls(url):
    with pytest.raises(ValidationError):
        NotifySettings(telegram_api_url=url)
