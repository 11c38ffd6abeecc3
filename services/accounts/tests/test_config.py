import pytest
from argon2.profiles import RFC_9106_LOW_MEMORY
from pydantic import ValidationError

from kernodeck_accounts.admission import Budget, Kind
from kernodeck_accounts.config import AccountsPolicy, AccountsSettings

pytestmark = pytest.mark.unit


def test_defaults():
    settings = AccountsSettings()
    assert (settings.service_name, settings.metrics_port) == ("accounts", 9102)
    assert settings.session_ttl.days == 30
    throttle = settings.login_throttle
    assert (throttle.per_pair.free, throttle.per_client.free, throttle.window.total_seconds()) == (5, 20, 900)
    assert (throttle.per_pair.base.total_seconds(), throttle.per_client.cap.total_seconds()) == (1, 900)
    registrations = settings.registration_throttle
    assert (registrations.per_client.limit, registrations.per_client.window.total_seconds()) == (20, 3600)
    assert (registrations.per_network.limit, registrations.per_network.window.total_seconds()) == (60, 3600)
    assert (registrations.overall.limit, registrations.overall.window.total_seconds()) == (120, 60)
    assert settings.password_hashing_threads == 1 and settings.known_client_for.days == 30
    assert settings.password_budgets == {Kind.LOGIN: Budget(5.0, 48), Kind.REGISTRATION: Budget(10.0, 64)}
    assert settings.max_workers == 128
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
        {"login_wait_max_s": 0},
        {"registration_queue_max": 0},
        {"registration_network_limit": 0},
        {"known_client_days": 0},
        {"argon2_time_cost": 0},
        {"argon2_memory_cost_kib": 31, "argon2_parallelism": 4},
    ],
)
def test_unusable_policies_are_refused_at_start(change):
    with pytest.raises(ValidationError):
        AccountsPolicy(**change)


def test_the_password_queue_leaves_eight_workers_for_everything_else():
    queues = {"login_queue_max": 20, "registration_queue_max": 31, "password_hashing_threads": 1}
    assert AccountsSettings(**queues, max_workers=60)
    with pytest.raises(ValidationError, match="must leave 8 of ACCOUNTS_MAX_WORKERS"):
        AccountsSettings(**queues, max_workers=59)
