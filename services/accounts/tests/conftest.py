import argon2
import pytest
from nameko.standalone.rpc import ServiceRpcProxy
from sqlmodel import Session

from kernodeck_accounts.config import AccountsSettings
from kernodeck_accounts.service import AccountsService
from kernodeck_kit.db import make_engine
from kernodeck_kit.testing import service_config, truncate_all
from kernodeck_kit.transport.calls import RemoteServiceError

# The cheapest argon2id argon2-cffi accepts: the suite exercises the flow, not the cost.
CHEAP_ARGON2 = {"argon2_time_cost": 1, "argon2_memory_cost_kib": 8, "argon2_parallelism": 1}


@pytest.fixture(scope="session")
def database_url(pg_database):
    return pg_database("kernodeck_accounts")


@pytest.fixture
def policy(request) -> AccountsSettings:
    """The cheap policy, with a login backoff long enough that a burst on a loaded machine ends within
    its first step; a test may pass its own (indirect parametrization)."""
    return getattr(request, "param", None) or AccountsSettings(**CHEAP_ARGON2, login_backoff_base_s=60)


@pytest.fixture
def config(rabbit_config, database_url, policy):
    truncate_all(database_url)
    return service_config(rabbit_config, database_url, policy)


@pytest.fixture
def remote_errors():
    return RemoteServiceError


@pytest.fixture
def start(container_factory):
    def start(config):
        container = container_factory(AccountsService, config)
        container.start()
        return container

    return start


@pytest.fixture
def accounts(start, config, remote_errors):
    start(config)
    with ServiceRpcProxy("accounts", config) as proxy:
        yield proxy


@pytest.fixture
def db(database_url):
    engine = make_engine(database_url)
    with Session(engine) as session:
        yield session
    engine.dispose()


@pytest.fixture
def verify_calls(monkeypatch):
    """How many argon2 verifications ran."""
    calls = []
    original = argon2.PasswordHasher.verify

    def counting(self, password_hash, password):
        calls.append(password_hash)
        return original(self, password_hash, password)

    monkeypatch.setattr(argon2.PasswordHasher, "verify", counting)
    return calls
