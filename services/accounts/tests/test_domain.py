import unicodedata
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_accounts.domain import (
    Backoff,
    LoginThrottle,
    RegistrationThrottle,
    Standing,
    ThrottleRule,
    client_key,
    network_key,
    new_session_token,
    normalize_email,
    standing,
    token_hash,
    validate_registration,
)
from kernodeck_contracts.errors import ServiceError

pytestmark = pytest.mark.unit

VALID = {"first_name": "Jane", "last_name": "Doe", "email": "jane@example.com", "password": "correct horse battery"}


def refused_fields(**change) -> set[str]:
    with pytest.raises(ServiceError) as caught:
        validate_registration(**{**VALID, **change})
    assert caught.value.code == "validation_error"
    return {e["field"] for e in caught.value.errors}


def email_of_length(n: int) -> str:
    local = "a" * 64
    return f"{local}@{'b' * (n - len(local) - len('@.com'))}.com"


def test_a_valid_registration_is_stripped_and_its_email_normalised():
    registration = validate_registration("  Jane ", " Doe", "  Jane.Doe@Example.COM ", " pass phrase with spaces ")
    assert (registration.first_name, registration.last_name) == ("Jane", "Doe")
    assert registration.email == "Jane.Doe@Example.COM"
    assert registration.email_normalized == "jane.doe@example.com"
    assert registration.password == " pass phrase with spaces "


def test_the_password_never_appears_in_the_repr():
    assert VALID["password"] not in repr(validate_registration(**VALID))


@pytest.mark.parametrize("password", ["p" * 15, "p" * 128, "é" * 15, "🔑" * 15, "🔑" * 128, " " * 15, "x" * 13 + "  "])
def test_passwords_of_15_to_128_characters_are_accepted(password):
    assert validate_registration(**{**VALID, "password": password}).password == password


@pytest.mark.parametrize("password", ["p" * 14, "p" * 129, "é" * 14, "🔑" * 129, "", None, 123456789012345])
def test_passwords_outside_15_to_128_characters_are_refused(password):
    assert refused_fields(password=password) == {"password"}


def test_password_length_counts_characters_not_bytes():
    fifteen_characters = "🔑" * 15
    assert len(fifteen_characters.encode()) == 60
    assert validate_registration(**{**VALID, "password": fifteen_characters})
    assert refused_fields(password="é" * 14) == {"password"}  # 28 bytes, 14 characters


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


@pytest.mark.parametrize("password", ["é" * 15, "mật khẩu dài đủ", "é" * 128])
def test_a_decomposed_password_of_15_to_128_characters_in_nfc_is_accepted_and_kept_in_nfc(password):
    assert len(password) != len(nfd(password))
    assert validate_registration(**{**VALID, "password": nfd(password)}).password == password


@pytest.mark.parametrize("password", ["é" * 14, "mật khẩu dài đ", "é" * 129])
def test_a_decomposed_password_outside_15_to_128_characters_in_nfc_is_refused(password):
    assert len(nfd(password)) >= 15
    assert refused_fields(password=nfd(password)) == {"password"}


def test_a_decomposed_email_and_names_are_kept_in_nfc():
    registration = validate_registration(nfd("Ánh"), nfd("Đặng"), nfd("Ánh@Ví-Dụ.vn"), VALID["password"])
    assert (registration.first_name, registration.last_name) == ("Ánh", "Đặng")
    assert registration.email == "Ánh@Ví-Dụ.vn"
    assert registration.email_normalized == "ánh@ví-dụ.vn"


def test_names_of_100_characters_in_nfc_are_accepted_whatever_their_encoding():
    assert validate_registration(**{**VALID, "first_name": nfd("Ạ" * 100)}).first_name == "Ạ" * 100


@pytest.mark.parametrize("field", ["first_name", "last_name"])
@pytest.mark.parametrize("name", ["N", "N" * 100, "  " + "N" * 100 + "  ", "Đặng Thị Ánh"])
def test_names_up_to_100_characters_are_accepted(field, name):
    assert getattr(validate_registration(**{**VALID, field: name}), field) == name.strip()


@pytest.mark.parametrize("field", ["first_name", "last_name"])
@pytest.mark.parametrize("name", ["", "   ", "\t\n", "N" * 101, None, 7])
def test_empty_or_long_names_are_refused(field, name):
    assert refused_fields(**{field: name}) == {field}


def test_an_email_of_254_characters_is_accepted_and_255_refused():
    assert len(email_of_length(254)) == 254
    assert validate_registration(**{**VALID, "email": email_of_length(254)}).email == email_of_length(254)
    assert refused_fields(email=email_of_length(255)) == {"email"}


@pytest.mark.parametrize(
    "email", ["jane.doe+gpu@example.co.uk", "J@EXAMPLE.IO", "ánh@ví-dụ.vn", "a_b-c@sub.example.com"]
)
def test_reasonable_emails_are_accepted(email):
    assert validate_registration(**{**VALID, "email": email}).email == email


@pytest.mark.parametrize(
    "email",
    [
        "",
        "   ",
        "plainaddress",
        "jane@example",
        "jane@@example.com",
        "ja@ne@example.com",
        "jane doe@example.com",
        "@example.com",
        "jane@.com",
        "jane@example..com",
        "jane@example.c",
        "jane@exa mple.com",
        "jane\x00@example.com",
        "a" * 65 + "@example.com",
        None,
    ],
)
def test_malformed_emails_are_refused(email):
    assert refused_fields(email=email) == {"email"}


def test_every_broken_rule_is_reported_at_once():
    with pytest.raises(ServiceError) as caught:
        validate_registration("", "L" * 101, "not-an-email", "short")
    assert {e["field"] for e in caught.value.errors} == {"first_name", "last_name", "email", "password"}
    assert all(e["message"] for e in caught.value.errors)


def test_email_normalisation_makes_nfc_and_nfd_spellings_one_address():
    assert normalize_email(nfd("Ánh@Ví-Dụ.vn")) == normalize_email("ánh@ví-dụ.vn")


def test_email_normalisation_ignores_case_and_surrounding_spaces():
    assert (
        normalize_email("  Jane.Doe@Example.COM\n") == normalize_email("jane.doe@example.com") == "jane.doe@example.com"
    )


def test_session_tokens_are_random_and_stored_only_as_their_sha256():
    first, second = new_session_token(), new_session_token()
    assert first != second and len(first) >= 43
    assert token_hash(first) == token_hash(first) != token_hash(second)
    assert len(token_hash(first)) == 64 and first not in token_hash(first)


NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
RULE = ThrottleRule(limit=5, window=timedelta(minutes=15))


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


def test_below_the_limit_is_not_blocked():
    assert RULE.retry_after([ago(s) for s in (10, 20, 30, 40)], NOW) == 0


def test_at_the_limit_blocks_until_the_oldest_counted_failure_leaves_the_window():
    failures = [ago(s) for s in (600, 50, 40, 30, 20)]
    assert RULE.retry_after(failures, NOW) == 900 - 600


def test_more_failures_than_the_limit_wait_for_enough_of_them_to_leave():
    failures = [ago(s) for s in (800, 700, 100, 90, 80, 70)]  # six: the two oldest must both go
    assert RULE.retry_after(failures, NOW) == 900 - 700


def test_failures_outside_the_window_do_not_count():
    failures = [ago(900), ago(1000), *[ago(s) for s in (10, 20, 30, 40)]]
    assert RULE.retry_after(failures, NOW) == 0


def test_retry_after_rounds_up_to_a_whole_second():
    failures = [ago(899.5), *[ago(s) for s in (10, 20, 30, 40)]]
    assert RULE.retry_after(failures, NOW) == 1


BACKOFF = Backoff(free=5, window=timedelta(minutes=15), base=timedelta(seconds=1), cap=timedelta(seconds=60))


def test_a_backoff_lets_the_free_failures_through():
    assert BACKOFF.retry_after([ago(0)] * 4, NOW) == 0


@pytest.mark.parametrize(("failures", "wait"), [(5, 1), (6, 2), (7, 4), (10, 32), (11, 60), (40, 60)])
def test_a_backoff_doubles_from_the_last_failure_up_to_its_cap(failures, wait):
    assert BACKOFF.retry_after([ago(0)] * failures, NOW) == wait


def test_a_backoff_counts_from_the_last_failure_and_only_within_its_window():
    assert BACKOFF.retry_after([ago(s) for s in (100, 50, 40, 30, 0.5)], NOW) == 1
    assert BACKOFF.retry_after([ago(s) for s in (100, 50, 40, 30, 1)], NOW) == 0
    assert BACKOFF.retry_after([ago(s) for s in (900, 50, 40, 30, 0)], NOW) == 0


def test_the_login_throttle_waits_for_the_longer_of_the_pair_and_the_client():
    throttle = LoginThrottle(per_pair=BACKOFF, per_client=replace(BACKOFF, free=2))
    assert throttle.retry_after([ago(0)], [ago(0)] * 4, NOW) == 4
    assert throttle.retry_after([ago(0)] * 6, [ago(0)], NOW) == 2
    assert throttle.retry_after([ago(0)], [ago(0)], NOW) == 0


def test_the_registration_throttle_waits_for_the_longest_of_the_client_its_network_and_everyone():
    hourly = ThrottleRule(limit=2, window=timedelta(hours=1))
    throttle = RegistrationThrottle(per_client=RULE, per_network=hourly, overall=hourly)
    assert throttle.retry_after([ago(100)], [], [ago(1000), ago(5)], NOW) == 3600 - 1000
    assert throttle.retry_after([ago(100)], [ago(2000), ago(5)], [], NOW) == 3600 - 2000
    assert throttle.retry_after([ago(s) for s in (100, 1, 2, 3, 4)], [], [ago(5)], NOW) == 800
    assert throttle.retry_after([ago(100)], [ago(5)], [ago(5)], NOW) == 0


@pytest.mark.parametrize(
    ("known_since", "failures", "place"),
    [
        (None, [], Standing.OTHER),  # never succeeded here
        (ago(60), [], Standing.KNOWN),
        (ago(60), [ago(61)], Standing.KNOWN),  # failed, then succeeded
        (ago(60), [ago(60)], Standing.KNOWN),
        (ago(60), [ago(59)], Standing.OTHER),  # failed since
    ],
)
def test_a_client_is_known_while_no_login_failed_since_its_last_success(known_since, failures, place):
    assert standing(known_since, failures) is place


@pytest.mark.parametrize(
    ("address", "network"),
    [
        ("203.0.113.7", "203.0.113.0/24"),
        ("203.0.113.255", "203.0.113.0/24"),
        ("203.0.114.0", "203.0.114.0/24"),
        ("::ffff:203.0.113.7", "203.0.113.0/24"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1::/48"),
        ("2001:db8:1:ffff::1", "2001:db8:1::/48"),
        ("2001:db8:2::1", "2001:db8:2::/48"),
        ("unknown", "unknown"),
    ],
)
def test_networks_are_ipv4_24s_and_ipv6_48s(address, network):
    assert network_key(address) == network


@pytest.mark.parametrize(
    ("address", "key"),
    [
        ("203.0.113.7", "203.0.113.7"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("unknown", "unknown"),
    ],
)
def test_clients_are_counted_by_ipv4_address_and_ipv6_64(address, key):
    assert client_key(address) == key
