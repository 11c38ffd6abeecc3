import pytest
from argon2.profiles import RFC_9106_LOW_MEMORY
from pydantic import ValidationError

from kernodeck_accounts.config import AccountsPolicy, AccountsSettings


def test_defaults():
    settings = AccountsSettings()
    assert (settings.service_name, settings.metrics_port) == ("accounts", 9102)
    assert settings.session_ttl.days == 30
    throttle = settings.login_throttle
    assert (throttle.per_pair.free, throttle.per_client.free, throttle.window.total_seconds()) == (5, 20, 900)
    assert (throttle.per_pair.base.total_seconds(), throttle.per_client.cap.total_seconds()) == (1, 900)
    registrations = settings.registration_throttle
    assert (registrations.per_client.limit, registrations.per_client.window.total_seconds()) == (5, 3600)
    assert (registrations.overall.limit, registrations.overall.window.total_seconds()) == (120, 60)
    pool = (settings.password_hashing_threads, settings.password_jobs_max, settings.password_wait_max_s)
    assert pool == (1, 4, 1.5)
    argon2 = (settings.argon2_time_cost, settings.argon2_memory_cost_kib, settings.argon2_parallelism)
    assert argon2 == (RFC_9106_LOW_MEMORY.time_cost, RFC_9106_LOW_MEMORY.memory_cost, RFC_9106_LOW_MEMORY.parallelism)


def test_the_environment_sets_the_policy_and_the_service_receives_it(monkeypatch):
    monkeypatch.setenv("ACCOUNTS_SESSION_TTL_DAYS", "7")
    monkeypatch.setenv("ACCOUNTS_LOGIN_PAIR_FREE_FAILURES", "3")
    monkeypatch.setenv("ACCOUNTS_ARGON2_MEMORY_COST_KIB", "131072")
    monkeypatch.setenv("ACCOUNTS_DATABASE_URL", "postgresql://accounts@db/accounts")
    settings = AccountsSettings()
    assert settings.resolved_database_url() == "postgresql://accounts@db/accounts"
    policy = AccountsSettings.from_nameko_config(settings.nameko_config())
    assert (policy.session_ttl_days, policy.login_pair_free_failures, policy.argon2_memory_cost_kib) == (7, 3, 131072)
    assert settings.nameko_config()["AMQP_URI"] == settings.amqp_uri


@pytest.mark.parametrize(
    "change",
    [
        {"session_ttl_days": 0},
        {"login_client_free_failures": 0},
        {"login_window_s": 0},
        {"login_backoff_base_s": 2, "login_backoff_max_s": 1},
        {"registration_client_limit": 0},
        {"registration_overall_window_s": 0},
        {"password_hashing_threads": 0},
        {"password_wait_max_s": 0},
        {"argon2_time_cost": 0},
        {"argon2_memory_cost_kib": 31, "argon2_parallelism": 4},
    ],
)
def test_unusable_policies_are_refused_at_start(change):
    with pytest.raises(ValidationError):
        AccountsPolicy(**change)


def test_password_jobs_leave_workers_for_everything_else():
    assert AccountsSettings(password_jobs_max=9, max_workers=10)
    with pytest.raises(ValidationError):
        AccountsSettings(password_jobs_max=10, max_workers=10)
