"""The account keys checked at start: a secret stops the service without ever being repeated, a bad public key
switches its network's methods off while the others run."""

import logging

import pytest

from kernodeck_chains.base58 import b58check_decode, b58check_encode
from kernodeck_kit.testing import wait_until
from kernodeck_payments import main
from kernodeck_payments.account_keys import PrivateKeyConfigured
from kernodeck_payments.config import PaymentsSettings
from services.payments.tests.conftest import TEST_KEYS
from services.payments.tests.helpers import code_of

ZPRV = bytes.fromhex("04b2430c")
# The test account's key with its private half in place of the public point (0x00 || 32 bytes), as an operator
# could paste by mistake: a well-formed extended private key, never used for money.
PUBLIC = b58check_decode(TEST_KEYS["bitcoin"])
PRIVATE_KEY = b58check_encode(ZPRV + PUBLIC[4:45] + b"\x00" + bytes(range(1, 33)))
SEED = "abandon " * 11 + "about"


@pytest.mark.parametrize(
    ("value", "kind"), [(PRIVATE_KEY, "an extended PRIVATE key"), (SEED, "what looks like a seed phrase")]
)
def test_a_secret_in_a_key_setting_is_refused_without_being_repeated(value, kind):
    with pytest.raises(PrivateKeyConfigured) as caught:
        PaymentsSettings(bitcoin_xpub=value)
    assert str(caught.value).startswith(f"PAYMENTS_BITCOIN_XPUB holds {kind}")
    assert value not in str(caught.value) and "abandon" not in str(caught.value)


def test_eleven_words_are_no_seed_phrase_but_a_bad_key():
    settings = PaymentsSettings(bitcoin_xpub="abandon " * 10 + "about")
    assert settings.unusable_keys() == {"bitcoin": "not valid base58check: invalid base58 character at position 7"}


def test_the_service_stops_at_start_with_a_clear_message_and_never_logs_the_key(monkeypatch, capsys, caplog):
    monkeypatch.setenv("PAYMENTS_LITECOIN_XPUB", PRIVATE_KEY)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(SystemExit) as stopped:
        main.main()
    message = str(stopped.value.code)
    assert message.startswith("kernodeck-payments will not start: PAYMENTS_LITECOIN_XPUB holds an extended PRIVATE")
    captured = capsys.readouterr()
    assert PRIVATE_KEY not in message + captured.out + captured.err + caplog.text


@pytest.fixture
def changed_settings() -> dict:
    return {"bitcoin_chain": "regtest"}  # the mainnet account key on regtest: no address from it


def test_a_bad_public_key_disables_its_methods_and_the_service_runs(payments, watcher, new_order, settings):
    from services.payments.tests.helpers import report_watchers

    report_watchers(watcher)
    listed = wait_until(
        lambda: (
            (m := {(x["asset"], x["network"]): x["reason"] for x in payments.list_methods()})[("LTC", "litecoin")]
            is None
            and m
        ),
        what="litecoin to be offered",
    )
    assert listed[("BTC", "bitcoin")] == "disabled"
    assert code_of(payments.create_order_payment, "acc1", new_order("acc1")["id"], "BTC", "bitcoin") == (
        "method_unavailable"
    )
    assert payments.create_order_payment("acc1", new_order("acc1")["id"], "LTC", "litecoin")["status"] == (
        "awaiting_transfer"
    )
    assert settings.unusable_keys() == {
        "bitcoin": "a zpub key is not accepted for bitcoin regtest (accepted: tpub, vpub)"
    }
