"""The secret detector, on both sides of each pattern: what it refuses, and what looks close but passes."""

import pytest

from kernodeck_support.leaks import find_secret, secrets_in

REFUSED = [
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "a private key",
    ),
    ("-----BEGIN RSA PRIVATE KEY-----", "a private key"),
    ("-----BEGIN PRIVATE KEY-----", "a private key"),
    ("curl -H 'Authorization: Bearer abc.def.ghi123456' https://api", "an Authorization header"),
    ('headers = {"Authorization": "Basic dXNlcjpwYXNz"}', "an Authorization header"),
    ("I sent bearer 0123456789abcdefABCDEF0123", "a bearer token"),
    ("password: hunter22", "a password"),
    ("DB_PASSWORD=s3cr3t!", "a password"),
    ('login(user="lan", passwd="tr0ub4dor")', "a password"),
    ("mysql --password=hunter22 -u root", "a password"),
    ("psql postgresql://lan:hunter22@db.example.org/app", "credentials in a URL"),
    ("git clone https://ghp_" + "a1" * 18 + "@github.com/x/y", "an access token"),
    ("HF hub: hf_" + "Ab3" * 11, "an access token"),
    ("openai key sk-proj-" + "x1" * 12, "an access token"),
    ("AKIAIOSFODNN7EXAMPLE", "an access token"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "a JSON web token",
    ),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1", "a Telegram bot token"),
    ("jupyter at http://10.0.0.5:8888/?token=3f2a9c0d1e4b5a6978c0ffee1234abcd", "a secret setting"),
    ("HF_TOKEN=abcdef0123456789abcdef", "a secret setting"),
    ("api_key = 'Zx81kLm02Pq9rT5uVw3y'", "a secret setting"),
    ("private_key: 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318", "a secret setting"),
    ("my seed phrase: abandon abandon ...", "a recovery phrase"),
]

PASSED = [
    "I forgot my password and cannot log in",  # the word alone
    "password:",  # nothing after it
    "password = os.environ['DB_PASSWORD']",  # read from the environment, not written out
    "mysql --password=$DB_PASSWORD",
    "Authorization failed: 401",  # no scheme and credentials
    "the bearer of bad news",
    "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')",
    "max_tokens=2048",
    "tokenizer.pad_token = tokenizer.eos_token",
    "secret = load_from_vault()",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl lan@laptop",  # public
    "-----BEGIN PUBLIC KEY-----",
    "txid 4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b",  # a transaction id
    "sent to 0x742d35Cc6634C0532925a3b844Bc454e4438f44e on ethereum",  # an address
    "https://github.com/pytorch/pytorch/issues/1",  # a URL without credentials
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB",
]


@pytest.mark.parametrize(("text", "what"), REFUSED)
def test_secrets_are_found_and_named(text, what):
    assert find_secret(text) == what


@pytest.mark.parametrize("text", PASSED)
def test_ordinary_text_passes(text):
    assert find_secret(text) is None


def test_each_field_holding_a_secret_is_named_without_repeating_it():
    found = secrets_in({"message": "hello", "first_error": "password: hunter22", "versions": None})
    assert found == [{"field": "first_error", "message": "looks like a password: remove it and send the request again"}]
    assert "hunter22" not in str(found)
