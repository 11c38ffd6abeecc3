"""The accounts' rules through their use cases, in memory: registration, login and its throttle, sessions."""

import unicodedata
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import argon2
import pytest

from kernodeck_accounts import use_cases
from kernodeck_accounts.admission import Budget, Kind
from kernodeck_accounts.config import AccountsSettings
from kernodeck_accounts.domain import Standing, token_hash
from kernodeck_accounts.passwords import Passwords
from kernodeck_contracts.errors import ServiceError
from services.accounts.tests.conftest import CHEAP_ARGON2
from services.accounts.tests.memory import Clock, memory_units

pytestmark = pytest.mark.unit

PASSWORD = "correct horse battery staple"
HERE = "203.0.113.10"
T0 = datetime(2026, 1, 1, 12, tzinfo=UTC)
CHEAP = {"time_cost": 1, "memory_cost_kib": 8, "parallelism": 1}


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
    def register(email="jane@example.com", password=PASSWORD, first_name="Jane", last_name="Doe", client_address=HERE):
        return use_cases.register(units, rules, clock, first_name, last_name, email, password, client_address)

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


def fail(login, times: int, **attempt) -> None:
    for _ in range(times):
        assert refusal(login, password="not the right passphrase", **attempt).code == "invalid_credentials"


def test_five_failures_from_one_client_make_it_wait_a_second_and_nobody_else(register, login, clock, verify_calls):
    register()
    fail(login, 4)
    assert login().token  # the fifth attempt is still checked, and clears the four
    fail(login, 5)
    verify_calls.clear()
    error = refusal(login)  # even the right password waits: the sixth attempt from this client
    assert (error.code, error.retry_after) == ("too_many_requests", 1)
    assert verify_calls == []
    # The owner elsewhere is never held back by guesses from here.
    assert login(client_address="198.51.100.1").account.email == "jane@example.com"
    clock.advance(seconds=1)
    assert login().account.email == "jane@example.com"


def test_the_wait_doubles_with_each_further_failure_up_to_its_cap(units, register, clock):
    rules = use_cases.rules_for(AccountsSettings(**CHEAP_ARGON2, login_backoff_max_s=60))

    def login(password=PASSWORD):
        return use_cases.login(units, rules, clock, "jane@example.com", password, HERE)

    register()
    fail(login, 5)
    waits = []
    for _ in range(8):
        waits.append(refusal(login).retry_after)
        clock.advance(seconds=waits[-1] - 1)
        assert refusal(login).retry_after == 1
        clock.advance(seconds=1)
        fail(login, 1)
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60]


def test_failures_older_than_the_window_count_no_more(register, login, clock):
    register()
    fail(login, 5)
    clock.advance(seconds=15 * 60 - 1)
    fail(login, 1)  # four of the five are still in the window: the wait has passed, the sixth is checked
    clock.advance(seconds=1)  # the first five have left it: one counts
    fail(login, 3)
    assert login().token


def test_one_client_backs_off_across_emails_after_twenty_failures(register, login, clock):
    register()
    for n in range(19):
        fail(login, 1, email=f"guess{n}@example.com")
    assert login().token  # the twentieth is checked; its success clears only jane's own failures
    fail(login, 1, email="guess19@example.com")
    error = refusal(login)
    assert (error.code, error.retry_after) == ("too_many_requests", 1)
    assert login(client_address="198.51.100.1").account.email == "jane@example.com"


def test_an_ipv6_client_is_counted_by_its_64(register, login):
    register()
    for n in range(1, 6):
        fail(login, 1, client_address=f"2001:db8:0:7::{n}")
    assert refusal(login, client_address="2001:db8:0:7:ffff::1").code == "too_many_requests"
    assert login(client_address="2001:db8:0:8::1").token  # the next /64 is another client


def test_a_lone_surrogate_in_credentials_is_invalid_not_a_crash(register, login, verify_calls):
    register()
    verify_calls.clear()
    assert refusal(login, password="correct horse \ud800 staple").code == "invalid_credentials"
    assert refusal(login, email="jane\udfff@example.com").code == "invalid_credentials"
    assert verify_calls == []


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
    register(email="joe@example.com", client_address="198.51.100.1")
    clock.advance(minutes=45)
    register(email="ann@example.com", client_address="198.51.100.2")

    use_cases.purge_stale(units, rules, clock.now)

    assert list(units.state.sessions) == [token_hash(live)]
    assert units.state.failures == []
    assert [client for client, _, _ in units.state.registrations] == ["198.51.100.1", "198.51.100.2"]
    clock.advance(minutes=15)
    use_cases.purge_stale(units, rules, clock.now)
    assert [client for client, _, _ in units.state.registrations] == ["198.51.100.2"]
    assert set(units.state.known_clients) == {HERE, "198.51.100.1", "198.51.100.2"}
    clock.advance(days=30, minutes=-60)  # 30 days after the first two successes, less than after the last
    use_cases.purge_stale(units, rules, clock.now)
    assert set(units.state.known_clients) == {"198.51.100.2"}


def test_twenty_registrations_an_hour_from_one_client_then_it_waits(register, clock):
    for n in range(20):
        register(email=f"n{n}@example.com")
        clock.advance(minutes=1)
    error = refusal(register, email="late@example.com")
    assert (error.code, error.retry_after) == ("too_many_requests", 60 * 60 - 20 * 60)
    assert register(email="late@example.com", client_address="203.0.113.11")  # another client of the network
    clock.advance(minutes=40)
    assert register(email="later@example.com")  # the first has left the hour


def test_sixty_registrations_an_hour_from_one_network_then_it_waits(register, clock):
    for n in range(60):
        register(email=f"n{n}@example.com", client_address=f"198.51.100.{n // 20}")
    error = refusal(register, email="late@example.com", client_address="198.51.100.200")
    assert (error.code, error.retry_after) == ("too_many_requests", 3600)
    assert register(email="late@example.com", client_address="198.51.101.1")  # the next /24
    assert register(email="v6@example.com", client_address="2001:db8::1")


def test_an_ipv6_client_registers_as_its_64_and_its_network_is_its_48(register):
    for n in range(20):
        register(email=f"n{n}@example.com", client_address=f"2001:db8:0:7::{n}")
    assert refusal(register, email="x@example.com", client_address="2001:db8:0:7:1::1").code == "too_many_requests"
    assert register(email="x@example.com", client_address="2001:db8:0:8::1")
    for n in range(39):
        register(email=f"m{n}@example.com", client_address=f"2001:db8:0:{100 + n}::1")
    assert refusal(register, email="y@example.com", client_address="2001:db8:0:200::1").code == "too_many_requests"
    assert register(email="y@example.com", client_address="2001:db8:1::1")


def test_registrations_from_everyone_together_are_limited(units, clock):
    rules = use_cases.rules_for(AccountsSettings(**CHEAP_ARGON2, registration_overall_limit=3))

    def register(n: int):
        return use_cases.register(units, rules, clock, "A", "B", f"n{n}@example.com", PASSWORD, f"198.51.100.{n}")

    for n in range(3):
        register(n)
    error = refusal(register, 3)
    assert (error.code, error.retry_after) == ("too_many_requests", 60)
    clock.advance(seconds=60)
    assert register(3)


def test_a_taken_email_is_answered_before_any_quota_and_counts_as_a_failed_login(register, login, units, rules):
    for _ in range(10):
        refusal(register, password="too short")
    register()
    for _ in range(19):
        assert refusal(register, client_address="198.51.100.9").code == "email_taken"
    assert len(units.state.registrations) == 1  # only the registration that reached its hash
    # Each answer told whether an account exists: the asking client backs off as a guesser does.
    assert refusal(register, client_address="198.51.100.9").code == "email_taken"  # the 20th is free
    error = refusal(register, client_address="198.51.100.9")
    assert (error.code, error.retry_after) == ("too_many_requests", 1)
    assert refusal(login, client_address="198.51.100.9").code == "too_many_requests"
    assert register(email="joe@example.com", client_address="198.51.100.9")  # its own quota is whole
    assert refusal(register).code == "email_taken"  # another client: asks freely
    assert login(client_address="198.51.100.8")


def test_a_registration_the_queue_refuses_is_not_counted_and_can_come_back(register, units, rules):
    full = {kind: Budget(max_wait_s=60, max_waiting=0) for kind in Kind}
    rules = replace(rules, passwords=Passwords(**CHEAP, budgets=full))
    with rules.passwords.turn(Kind.REGISTRATION, "someone else"):
        error = refusal(use_cases.register, units, rules, Clock(T0), "Jane", "Doe", "j@example.com", PASSWORD, HERE)
    assert (error.code, error.retry_after) == ("service_unavailable", 1)
    assert units.state.registrations == [] and units.state.accounts == {}
    assert use_cases.register(units, rules, Clock(T0), "Jane", "Doe", "j@example.com", PASSWORD, HERE)
    assert len(units.state.registrations) == len(units.state.accounts) == 1


def test_a_login_the_queue_refuses_is_no_failed_login(register, units, rules):
    register()
    full = {kind: Budget(max_wait_s=60, max_waiting=0) for kind in Kind}
    rules = replace(rules, passwords=Passwords(**CHEAP, budgets=full))
    for _ in range(10):
        with rules.passwords.turn(Kind.LOGIN, "someone else"):
            error = refusal(use_cases.login, units, rules, Clock(T0), "jane@example.com", "wrong guess", HERE)
        assert error.code == "service_unavailable"
    assert units.state.failures == []
    assert use_cases.login(units, rules, Clock(T0), "jane@example.com", PASSWORD, HERE)


@pytest.fixture
def places(rules, monkeypatch):
    """The standing each login asks the password queue for."""
    asked = []
    turn = rules.passwords.turn

    def asking(kind, client, place=Standing.OTHER):
        if kind is Kind.LOGIN:
            asked.append(place)
        return turn(kind, client, place)

    monkeypatch.setattr(rules.passwords, "turn", asking)
    return asked


def test_a_client_is_known_from_its_success_until_a_login_fails_or_thirty_days_pass(register, login, clock, places):
    def then(*call, **kwargs):
        clock.advance(seconds=1)
        return call[0](*call[1:], **kwargs)

    register(client_address="198.51.100.1")
    then(login, client_address=HERE)  # a first login here
    then(login, client_address=HERE)
    then(login, client_address="198.51.100.1")  # where it registered
    then(refusal, login, password="wrong password here", client_address=HERE)
    then(login, client_address=HERE)  # a failure since its last success
    clock.advance(days=30, seconds=-2)
    then(login, client_address=HERE)
    clock.advance(days=30, seconds=-1)
    then(login, client_address=HERE)  # 30 days after its last success
    known, other = Standing.KNOWN, Standing.OTHER
    assert places == [other, known, known, known, other, known, other]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("first_name", "Ja\x00ne"),
        ("first_name", "Ja\tne"),
        ("last_name", "Doe\x85"),
        ("last_name", "Doe\ud800"),
        ("email", "jane\x7f@example.com"),
        ("email", "jane\udc00@example.com"),
        ("password", "correct horse \ud800 staple"),
    ],
)
def test_control_characters_and_lone_surrogates_are_refused(register, units, field, value):
    error = refusal(register, **{field: value})
    assert error.code == "validation_error"
    assert [e["field"] for e in error.errors] == [field]
    assert units.state.accounts == {} and units.state.registrations == []


def test_letters_of_any_script_and_emoji_are_welcome(register):
    account = register(first_name="Zoë 😀", last_name="Nguyễn-Đặng", email="zoë@example.com", password="🔑" * 15)
    assert (account.first_name, account.last_name) == ("Zoë 😀", "Nguyễn-Đặng")
