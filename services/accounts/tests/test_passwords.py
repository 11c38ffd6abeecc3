from argon2.profiles import RFC_9106_LOW_MEMORY

from kernodeck_accounts.config import AccountsPolicy
from kernodeck_accounts.passwords import Passwords

PASSWORD = "correct horse battery staple"


def production_passwords() -> Passwords:
    policy = AccountsPolicy()
    return Passwords(policy.argon2_time_cost, policy.argon2_memory_cost_kib, policy.argon2_parallelism)


def test_production_parameters_make_rfc_9106_argon2id_hashes():
    passwords = production_passwords()
    stored = passwords.hash(PASSWORD)
    profile = RFC_9106_LOW_MEMORY
    assert stored.startswith(f"$argon2id$v=19$m={profile.memory_cost},t={profile.time_cost},p={profile.parallelism}$")
    assert passwords.verify(stored, PASSWORD)
    assert not passwords.verify(stored, PASSWORD + " ")
    assert not passwords.needs_rehash(stored)


def test_hashes_are_salted():
    passwords = Passwords(1, 8, 1)
    assert passwords.hash(PASSWORD) != passwords.hash(PASSWORD)


def test_without_a_hash_nothing_verifies():
    assert not Passwords(1, 8, 1).verify(None, PASSWORD)


def test_a_hash_made_with_other_parameters_needs_a_rehash():
    cheap_hash = Passwords(1, 8, 1).hash(PASSWORD)
    passwords = production_passwords()
    assert passwords.verify(cheap_hash, PASSWORD)
    assert passwords.needs_rehash(cheap_hash)
