"""The accounts service on the broker and PostgreSQL: its tables, locks and RPC; the rules are in test_use_cases.py."""

import logging
from datetime import UTC, datetime, timedelta

import argon2
import pytest
from nameko.exceptions import IncorrectSignature
from nameko.standalone.rpc import ServiceRpcProxy
from nameko.testing.services import entrypoint_hook
from sqlalchemy import func, update
from sqlmodel import select

from kernodeck_accounts.config import AccountsSettings
from kernodeck_accounts.domain import token_hash
from kernodeck_accounts.store import AccountRow, KnownClientRow, LoginFailureRow, RegistrationRow, SessionRow
from kernodeck_kit.logs import JsonFormatter
from services.accounts.tests.conftest import CHEAP_ARGON2

PASSWORD = "correct horse battery staple"
HERE = "203.0.113.10"


def register(accounts, email="jane@example.com", password=PASSWORD, first_name="Jane", last_name="Doe", client=HERE):
    return accounts.register(
        first_name=first_name, last_name=last_name, email=email, password=password, client_address=client
    )


def login(accounts, email="jane@example.com", password=PASSWORD, client_address=HERE):
    return accounts.login(email=email, password=password, client_address=client_address)


def refusal(remote_errors, call, *args, **kwargs):
    with pytest.raises(remote_errors) as caught:
        call(*args, **kwargs)
    return caught.value


def account_row(db, email_normalized="jane@example.com") -> AccountRow:
    db.expire_all()
    return db.exec(select(AccountRow).where(AccountRow.email_normalized == email_normalized)).one()


def test_health(accounts):
    assert accounts.health() == {"service": "accounts"}


def test_register_returns_the_account(accounts):
    account = register(accounts, email="  Jane.Doe@Example.com ", first_name=" Jane ")
    assert set(account) == {"id", "first_name", "last_name", "email", "created_at", "is_operator"}
    assert (account["first_name"], account["last_name"]) == ("Jane", "Doe")
    assert account["email"] == "Jane.Doe@Example.com"
    assert account["is_operator"] is False
    created = datetime.fromisoformat(account["created_at"])
    assert created.utcoffset() == timedelta(0)
    assert abs(datetime.now(UTC) - created) < timedelta(minutes=1)


def test_the_password_is_stored_as_an_argon2id_hash(accounts, db):
    register(accounts)
    stored = account_row(db).password_hash
    assert stored.startswith("$argon2id$") and PASSWORD not in stored


def test_login_resolve_and_logout(accounts, remote_errors):
    account = register(accounts)
    session = login(accounts, email="JANE@example.com ")
    assert set(session) == {"token", "expires_at", "account"}
    assert session["account"] == account
    expires_at = datetime.fromisoformat(session["expires_at"])
    assert abs(expires_at - (datetime.now(UTC) + timedelta(days=30))) < timedelta(minutes=1)

    assert accounts.resolve_session(session["token"]) == account
    assert accounts.logout(session["token"]) is None
    error = refusal(remote_errors, accounts.resolve_session, session["token"])
    assert (error.code, error.detail) == ("unauthenticated", "not logged in or session expired")


def test_only_the_hash_of_a_token_is_stored(accounts, db):
    register(accounts)
    token = login(accounts)["token"]
    stored = db.exec(select(SessionRow)).one()
    assert stored.token_hash == token_hash(token) != token


def test_an_expired_session_is_unauthenticated(accounts, remote_errors, db):
    register(accounts)
    token = login(accounts)["token"]
    db.execute(update(SessionRow).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
    db.commit()
    assert refusal(remote_errors, accounts.resolve_session, token).code == "unauthenticated"


# A per-client login limit the burst can exceed.
ROOMY = AccountsSettings(**CHEAP_ARGON2, login_backoff_base_s=60, login_client_free_failures=8)


@pytest.mark.parametrize("policy", [ROOMY], indirect=True)
def test_concurrent_registrations_of_one_email_make_one_account(accounts, remote_errors, db):
    spellings = ["race@example.com", "RACE@example.com", "Race@Example.com", "race@EXAMPLE.com", "rAce@example.com"]
    replies = [
        accounts.register.call_async(first_name="R", last_name="C", email=email, password=PASSWORD, client_address=HERE)
        for email in spellings
    ]
    outcomes = []
    for reply in replies:
        try:
            outcomes.append(reply.result()["id"])
        except remote_errors as error:
            outcomes.append(error.code)
    assert outcomes.count("email_taken") == len(spellings) - 1
    assert db.exec(select(func.count()).select_from(AccountRow)).one() == 1


def test_a_login_with_old_argon2_parameters_rehashes_the_password(accounts, db, policy):
    register(accounts)
    old_parameters = argon2.PasswordHasher(time_cost=2, memory_cost=16, parallelism=1)
    old_hash = old_parameters.hash(PASSWORD)
    db.execute(update(AccountRow).values(password_hash=old_hash))
    db.commit()

    login(accounts)
    new_hash = account_row(db).password_hash
    assert new_hash != old_hash
    assert f"m={policy.argon2_memory_cost_kib},t={policy.argon2_time_cost}," in new_hash
    login(accounts)
    assert account_row(db).password_hash == new_hash


def test_get_account(accounts, remote_errors):
    account = register(accounts)
    assert accounts.get_account(account["id"]) == account
    assert refusal(remote_errors, accounts.get_account, "0" * 32).code == "not_found"


def test_the_operator_role_cannot_be_set_over_rpc(accounts, db):
    with pytest.raises(IncorrectSignature):
        accounts.register(
            first_name="E",
            last_name="V",
            email="eve@example.com",
            password=PASSWORD,
            client_address=HERE,
            is_operator=True,
        )
    assert db.exec(select(func.count()).select_from(AccountRow)).one() == 0


def test_purge_drops_dead_sessions_and_uncounted_failures(start, config, db):
    container = start(config)
    with ServiceRpcProxy("accounts", config) as accounts:
        register(accounts)
        live, expired, revoked = (login(accounts)["token"] for _ in range(3))
        accounts.logout(revoked)
    now = datetime.now(UTC)
    db.execute(update(SessionRow).where(SessionRow.token_hash == token_hash(expired)).values(expires_at=now))
    db.add(LoginFailureRow(email_normalized="a@example.com", client_address=HERE, at=now - timedelta(minutes=16)))
    db.add(LoginFailureRow(email_normalized="b@example.com", client_address=HERE, at=now - timedelta(minutes=1)))
    db.commit()

    with entrypoint_hook(container, "purge_stale") as purge:
        purge()

    db.expire_all()
    assert db.exec(select(SessionRow.token_hash)).all() == [token_hash(live)]
    assert db.exec(select(LoginFailureRow.email_normalized)).all() == ["b@example.com"]


def test_logs_carry_no_password_token_or_hash(accounts, remote_errors, caplog, db):
    caplog.set_level(logging.DEBUG, logger="kernodeck_accounts")
    caplog.set_level(logging.INFO)
    register(accounts)
    refusal(remote_errors, register, accounts, password="second passphrase here")
    refusal(remote_errors, login, accounts, password="a wrong passphrase")
    token = login(accounts)["token"]
    accounts.resolve_session(token)
    accounts.logout(token)
    secrets = [PASSWORD, "second passphrase here", "a wrong passphrase", token, token_hash(token)]
    secrets.append(account_row(db).password_hash)

    formatter = JsonFormatter("accounts")
    rendered = "\n".join(formatter.format(record) for record in caplog.records)
    assert "account registered" in rendered
    assert not [secret for secret in secrets if secret in rendered]


@pytest.fixture
def replicas(start, config):
    """Two service replicas, each with its own engine and 10 workers, behind one proxy."""
    start(config)
    start(config)
    with ServiceRpcProxy("accounts", config) as proxy:
        yield proxy


def outcomes(remote_errors, replies) -> list[str]:
    """The outcome of each call sent at once, as its error code or "ok"."""
    codes = []
    for reply in replies:
        try:
            reply.result()
            codes.append("ok")
        except remote_errors as error:
            codes.append(error.code)
    return codes


def parallel_logins(accounts, remote_errors, attempts: list[dict]) -> list[str]:
    return outcomes(remote_errors, [accounts.login.call_async(**attempt) for attempt in attempts])


def assert_only_the_free_ones_checked(codes: list[str], verify_calls: list, free: int) -> None:
    assert codes.count("invalid_credentials") == len(verify_calls) == free
    # The others waited their turn (throttled), or found the hashing pool full (503): none was checked.
    assert set(codes) - {"invalid_credentials"} <= {"too_many_requests", "service_unavailable"}


@pytest.mark.parametrize("policy", [ROOMY], indirect=True)
def test_parallel_guesses_at_one_email_from_one_client_get_exactly_the_free_ones_checked(
    replicas, remote_errors, verify_calls
):
    register(replicas)
    verify_calls.clear()
    guess = {"email": "jane@example.com", "password": "wrong guess number 1", "client_address": HERE}
    assert_only_the_free_ones_checked(parallel_logins(replicas, remote_errors, [guess] * 30), verify_calls, 5)

    # The owner elsewhere logs in at once; here, after the backoff.
    assert login(replicas, client_address="198.51.100.1")["account"]["email"] == "jane@example.com"
    error = refusal(remote_errors, login, replicas)
    assert (error.code, 0 < int(error.retry_after) <= 60) == ("too_many_requests", True)


@pytest.mark.parametrize("policy", [ROOMY], indirect=True)
def test_parallel_guesses_from_one_client_get_exactly_the_free_ones_checked(replicas, remote_errors, verify_calls, db):
    register(replicas)
    verify_calls.clear()
    guesses = [
        {"email": f"guess{n}@example.com", "password": "wrong guess number 1", "client_address": HERE}
        for n in range(30)
    ]
    assert_only_the_free_ones_checked(parallel_logins(replicas, remote_errors, guesses), verify_calls, 8)

    assert refusal(remote_errors, login, replicas).code == "too_many_requests"
    assert login(replicas, client_address="198.51.100.1")["account"]["email"] == "jane@example.com"
    db.execute(update(LoginFailureRow).values(at=datetime.now(UTC) - timedelta(minutes=15)))
    db.commit()
    assert login(replicas)["account"]["email"] == "jane@example.com"


def parallel_registrations(accounts, remote_errors, clients: list[str]) -> list[str]:
    replies = [
        accounts.register.call_async(
            first_name="R", last_name="C", email=f"r{n}@example.com", password=PASSWORD, client_address=client
        )
        for n, client in enumerate(clients)
    ]
    return outcomes(remote_errors, replies)


def test_parallel_registrations_from_one_client_make_exactly_its_limit(accounts, remote_errors, db):
    codes = parallel_registrations(accounts, remote_errors, [HERE] * 24)
    assert sorted(codes) == ["ok"] * 20 + ["too_many_requests"] * 4
    assert db.exec(select(func.count()).select_from(RegistrationRow)).one() == 20
    assert register(accounts, client="2001:db8::1")  # another client
    error = refusal(remote_errors, register, accounts, email="late@example.com")
    assert (error.code, 3500 < int(error.retry_after) <= 3600) == ("too_many_requests", True)


@pytest.mark.parametrize("policy", [AccountsSettings(**CHEAP_ARGON2, registration_network_limit=3)], indirect=True)
def test_parallel_registrations_from_one_network_stop_at_its_limit(accounts, remote_errors, db):
    codes = parallel_registrations(accounts, remote_errors, [f"198.51.100.{n}" for n in range(6)])
    assert sorted(codes) == ["ok"] * 3 + ["too_many_requests"] * 3
    assert register(accounts, client="198.51.101.1")  # the next /24


@pytest.mark.parametrize("policy", [AccountsSettings(**CHEAP_ARGON2, registration_overall_limit=4)], indirect=True)
def test_parallel_registrations_from_everyone_stop_at_the_overall_limit(accounts, remote_errors, db):
    codes = parallel_registrations(accounts, remote_errors, [f"198.51.{n}.1" for n in range(7)])
    assert sorted(codes) == ["ok"] * 4 + ["too_many_requests"] * 3
    assert db.exec(select(func.count()).select_from(AccountRow)).one() == 4


def count_of(db, row) -> int:
    db.expire_all()
    return db.exec(select(func.count()).select_from(row)).one()


# A hash of about 10 ms on one thread: a burst of 50 queues behind it.
QUEUED = {"argon2_time_cost": 1, "argon2_memory_cost_kib": 8192, "argon2_parallelism": 1}


@pytest.mark.parametrize("policy", [AccountsSettings(**QUEUED, registration_wait_max_s=60)], indirect=True)
def test_a_burst_of_fifty_registrations_from_ten_clients_waits_its_turn_and_each_is_made_once(
    accounts, remote_errors, db
):
    codes = parallel_registrations(accounts, remote_errors, [f"198.51.100.{n % 10}" for n in range(50)])
    assert codes == ["ok"] * 50
    assert count_of(db, AccountRow) == count_of(db, RegistrationRow) == 50
    emails = db.exec(select(AccountRow.email_normalized)).all()
    assert sorted(emails) == sorted(f"r{n}@example.com" for n in range(50))


@pytest.mark.parametrize("policy", [AccountsSettings(**QUEUED, registration_wait_max_s=0.05)], indirect=True)
def test_registrations_the_queue_refuses_make_nothing_and_make_one_account_each_when_sent_again(
    accounts, remote_errors, db
):
    codes = parallel_registrations(accounts, remote_errors, [f"198.51.100.{n % 10}" for n in range(50)])
    refused = [n for n, code in enumerate(codes) if code == "service_unavailable"]
    assert refused and set(codes) == {"ok", "service_unavailable"}
    assert count_of(db, AccountRow) == count_of(db, RegistrationRow) == 50 - len(refused)
    for n in refused:  # one at a time, as a client told to come back does
        register(accounts, email=f"r{n}@example.com", client=f"198.51.100.{n % 10}")
    assert count_of(db, AccountRow) == count_of(db, RegistrationRow) == 50


@pytest.mark.parametrize("policy", [AccountsSettings(password_hashing_threads=1, login_queue_max=1)], indirect=True)
def test_logins_the_queue_refuses_are_no_failures_and_a_known_client_is_remembered(accounts, remote_errors, db):
    """Production argon2 (a hash of 0.1 s or more) and one login waiting at most: a burst of ten is refused in
    part, and only the ones checked count as failures."""
    register(accounts)
    guesses = [
        accounts.login.call_async(email=f"x{n}@example.com", password="wrong password", client_address=HERE)
        for n in range(10)
    ]
    codes = outcomes(remote_errors, guesses)
    assert "service_unavailable" in codes and set(codes) == {"invalid_credentials", "service_unavailable"}
    assert count_of(db, LoginFailureRow) == codes.count("invalid_credentials")
    assert login(accounts)["account"]["email"] == "jane@example.com"
    assert [row.client_address for row in db.exec(select(KnownClientRow)).all()] == [HERE]


@pytest.mark.parametrize(
    "policy", [AccountsSettings(password_hashing_threads=1, registration_wait_max_s=60)], indirect=True
)
def test_a_burst_of_registrations_waits_for_the_hashing_thread_and_session_checks_go_on(accounts, remote_errors, db):
    """Production argon2 (64 MiB): the burst queues for the one hashing thread, sessions answer meanwhile."""
    register(accounts, email="owner@example.com", client="192.0.2.1")
    token = login(accounts, email="owner@example.com")["token"]
    replies = [
        accounts.register.call_async(
            first_name="R",
            last_name="C",
            email=f"r{n}@example.com",
            password=PASSWORD,
            client_address=f"198.51.100.{n}",
        )
        for n in range(8)
    ]
    checks = [accounts.resolve_session(token)["email"] for _ in range(5)]
    registered_meanwhile = count_of(db, AccountRow) - 1
    codes = outcomes(remote_errors, replies)
    assert checks == ["owner@example.com"] * 5
    # Eight hashes of 64 MiB one after the other: the checks were answered before they were all done.
    assert registered_meanwhile < codes.count("ok") == 8
