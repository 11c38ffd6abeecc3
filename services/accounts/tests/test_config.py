import pytest
from argon2.profiles import RFC_9106_LOW_MEMORY
from pydantic import ValidationError

from kernodeck_accounts.config import AccountsPolicy, AccountsSettings


def test_defaults():
    settings = AccountsSettings()
    assert (settings.service_name, settings.metrics_port) == ("accounts", 9102)
    assert settings.session_ttl.days == 30
    throttle = settings.login_throttle
    assert (throttle.per_email.limit, throttle.per_email.window.total_seconds()) == (5, 900)
    assert (throttle.per_address.limit, throttle.per_address.window.total_seconds()) == (20, 900)
    argon2 = (settings.argon2_time_cost, settings.argon2_memory_cost_kib, settings.argon2_parallelism)
    assert argon2 == (RFC_9106_LOW_MEMORY.time_cost, RFC_9106_LOW_MEMORY.memory_cost, RFC_9106_LOW_MEMORY.parallelism)


def test_the_environment_sets_the_policy_and_the_service_receives_it(monkeypatch):
    monkeypatch.setenv("ACCOUNTS_SESSION_TTL_DAYS", "7")
    monkeypatch.setenv("ACCOUNTS_LOGIN_EMAIL_FAILURE_LIMIT", "3")
    monkeypatch.setenv("ACCOUNTS_ARGON2_MEMORY_COST_KIB", "131072")
    monkeypatch.setenv("ACCOUNTS_DATABASE_URL", "postgresql://accounts@db/accounts")
    settings = AccountsSettings()
    assert settings.resolved_database_url() == "postgresql://accounts@db/accounts"
    policy = AccountsSettings.from_nameko_config(settings.nameko_config())
    assert (policy.session_ttl_days, policy.login_email_failure_limit, policy.argon2_memory_cost_kib) == (7, 3, 131072)
    assert settings.nameko_config()["AMQP_URI"] == settings.amqp_uri


@pytest.mark.parametrize(
    "change",
    [
        {"session_ttl_days": 0},
        {"login_address_failure_limit": 0},
        {"login_email_window_s": 0},
        {"argon2_time_cost": 0},
        {"argon2_memory_cost_kib": 31, "argon2_parallelism": 4},
    ],
)
def test_unusable_policies_are_refused_at_start(change):
    with pytest.raises(ValidationError):
        AccountsPolicy(**change)
