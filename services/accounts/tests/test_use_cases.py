"""The accounts' rules through their use cases, in memory: registration, login and its throttle, sessions."""

import unicodedata
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import argon2
import pytest

from kernodeck_accounts import use_cases
from kernodeck_accounts.config import AccountsSettings
from kernodeck_accounts.domain import token_hash
from kernodeck_contracts.errors import ServiceError
from services.accounts.tests.conftest import CHEAP_ARGON2
from services.accounts.tests.memory import Clock, memory_units

PASSWORD = "correct horse battery staple"
HERE = "203.0.113.10"
T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)


@pytest.fixture
def units():
    return memory_units()


@pytest.fixture
def clock() -> Clock:
    return Clock(T0)


@pytest.fixture
def rules():
    return use_cases.rules_for(AccountsSettings(**CHEAP_ARGON2))


@pytest.fixture
def register(units, rules, clock):
    def register(email="jane@example.com", password=PASSWORD, first_name="Jane", last_name="Doe"):
        return use_cases.register(units, rules.passwords, clock, first_name, last_name, email, password)

    return register


@pytest.fixture
def login(units, rules, clock):
    def login(email="jane@example.com", password=PASSWORD, client_address=HERE):
        return use_cases.login(units, rules, clock, email, password, client_address)

    return login


def refusal(call, *args, **kwargs) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        call(*args, **kwargs)
    return caught.value


def test_registration_keeps_the_names_and_email_as_typed_and_the_time(register):
    account = register(email="  Jane.Doe@Example.com ", first_name=" Jane ")
    assert (account.first_name, account.last_name, account.email) == ("Jane", "Doe", "Jane.Doe@Example.com")
    assert (account.email_normalized, account.is_operator, account.created_at) == ("jane.doe@example.com", False, T0)


def test_an_invalid_registration_reports_every_field_and_stores_nothing(register, units):
    error = refusal(register, email="nope", password="x" * 14, first_name="")
    assert error.code == "validation_error"
    assert {e["field"] for e in error.errors} == {"first_name", "email", "password"}
    assert units.state.accounts == {}


def test_login_resolve_and_logout(units, register, login, clock):
    account = register()
    session = login(email="JANE@example.com ")
    assert session.account == account
    assert session.expires_at == T0 + timedelta(days=30)

    assert use_cases.resolve_session(units, clock, session.token) == account
    use_cases.logout(units, clock, session.token)
    error = refusal(use_cases.resolve_session, units, clock, session.token)
    assert (error.code, error.detail) == ("unauthenticated", "not logged in or session expired")


def test_logout_is_idempotent_and_ends_only_its_own_session(units, register, login, clock):
    register()
    phone, laptop = login().token, login().token
    for token in (phone, phone, "never-issued", None):
        use_cases.logout(units, clock, token)
    assert refusal(use_cases.resolve_session, units, clock, phone).code == "unauthenticated"
    assert use_cases.resolve_session(units, clock, laptop).email == "jane@example.com"


@pytest.mark.parametrize("token", ["", "x" * 43, None, 42])
def test_unknown_or_malformed_tokens_are_unauthenticated(units, register, login, clock, token):
    register()
    login()
    assert refusal(use_cases.resolve_session, units, clock, token).code == "unauthenticated"


def test_a_session_ends_when_it_expires(units, register, login, clock):
    register()
    token = login().token
    clock.advance(days=30, seconds=-1)
    assert use_cases.resolve_session(units, clock, token).email == "jane@example.com"
    clock.advance(seconds=1)
    assert refusal(use_cases.resolve_session, units, clock, token).code == "unauthenticated"


def test_registering_an_existing_email_in_another_case_changes_nothing(units, register, login):
    original = register()
    before = dict(units.state.accounts)

    error = refusal(register, email=" JANE@EXAMPLE.COM", password="intruder's own passphrase", first_name="Eve")
    assert (error.code, error.detail) == ("email_taken", "an account with this email already exists")
    assert "Jane" not in str(error.args) and original.id not in str(error.args)
    assert units.state.accounts == before and units.state.sessions == {}

    assert login(email="Jane@Example.com").account.id == original.id
    assert refusal(login, email="JANE@EXAMPLE.COM", password="intruder's own passphrase").code == "invalid_credentials"


@pytest.mark.parametrize(("registered_form", "login_form"), [("NFC", "NFD"), ("NFD", "NFC")])
def test_a_password_and_email_typed_composed_or_decomposed_log_in_alike(register, login, registered_form, login_form):
    password, email = "mật khẩu dài đủ", "ánh@ví-dụ.vn"
    account = register(
        email=unicodedata.normalize(registered_form, email), password=unicodedata.normalize(registered_form, password)
    )
    session = login(
        email=unicodedata.normalize(login_form, email), password=unicodedata.normalize(login_form, password)
    )
    assert session.account.id == account.id
    assert session.account.email == email


def test_the_decomposed_spelling_of_a_registered_email_is_taken(register):
    register(email="ánh@ví-dụ.vn")
    assert refusal(register, email=unicodedata.normalize("NFD", "Ánh@Ví-Dụ.vn")).code == "email_taken"


def test_unknown_email_and_wrong_password_get_the_same_answer_after_the_same_work(register, login, verify_calls):
    register()
    verify_calls.clear()
    unknown = refusal(login, email="nobody@example.com")
    wrong = refusal(login, password="not the right passphrase")
    assert (unknown.code, unknown.detail, unknown.errors) == (wrong.code, wrong.detail, wrong.errors)
    assert (unknown.code, unknown.detail) == ("invalid_credentials", "email or password is incorrect")
    assert len(verify_calls) == 2 and all(h.startswith("$argon2id$") for h in verify_calls)


@pytest.mark.parametrize(("email", "password"), [(None, PASSWORD), ("jane@example.com", None), (["x"], 1)])
def test_malformed_credentials_are_invalid(register, login, email, password):
    register()
    assert refusal(login, email=email, password=password).code == "invalid_credentials"


def test_the_sixth_attempt_after_five_failures_for_one_email_waits_for_the_first_to_leave_the_window(
    register, login, clock, verify_calls
):
    register()
    for _ in range(5):
        assert refusal(login, email="Jane@example.com", password="x" * 20).code == "invalid_credentials"
        clock.advance(seconds=10)
    verify_calls.clear()
    # Even the right password, from another address: the email itself is throttled.
    error = refusal(login, client_address="198.51.100.1")
    assert (error.code, error.retry_after) == ("too_many_requests", 15 * 60 - 50)
    assert verify_calls == []

    other = register(email="joe@example.com")
    assert login(email="joe@example.com").account == other
    clock.advance(seconds=15 * 60 - 50)
    assert login().account.email == "jane@example.com"


def test_a_successful_login_clears_that_emails_failures(register, login):
    register()
    for _ in range(2):
        for _ in range(4):
            refusal(login, password="x" * 20)
        assert login().token


def test_one_address_is_throttled_across_emails(register, login):
    register()
    for n in range(20):
        refusal(login, email=f"guess{n}@example.com", password="x" * 20)
    error = refusal(login)
    assert error.code == "too_many_requests" and error.retry_after > 0
    assert login(client_address="198.51.100.1").account.email == "jane@example.com"


def test_a_login_with_old_argon2_parameters_rehashes_the_password(units, register, login, rules):
    account = register()
    old_hash = argon2.PasswordHasher(time_cost=2, memory_cost=16, parallelism=1).hash(PASSWORD)
    units.state.accounts[account.id] = replace(account, password_hash=old_hash)

    login()
    new_hash = units.state.accounts[account.id].password_hash
    assert new_hash != old_hash
    assert f"m={CHEAP_ARGON2['argon2_memory_cost_kib']},t={CHEAP_ARGON2['argon2_time_cost']}," in new_hash
    login()
    assert units.state.accounts[account.id].password_hash == new_hash


def test_get_account(units, register):
    account = register()
    assert use_cases.get_account(units, account.id) == account
    assert refusal(use_cases.get_account, units, "0" * 32).code == "not_found"
    assert refusal(use_cases.get_account, units, None).code == "not_found"


def test_purge_drops_dead_sessions_and_failures_no_throttle_counts(units, register, login, clock, rules):
    register()
    live, expired, revoked = (login().token for _ in range(3))
    use_cases.logout(units, clock, revoked)
    units.state.sessions[token_hash(expired)].expires_at = clock.now
    refusal(login, email="a@example.com")
    clock.advance(minutes=15)
    refusal(login, email="b@example.com")

    use_cases.purge_stale(units, rules.throttle, clock.now)

    assert list(units.state.sessions) == [token_hash(live)]
    assert [email for email, _, _ in units.state.failures] == ["b@example.com"]
