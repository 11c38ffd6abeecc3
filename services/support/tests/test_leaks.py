"""The secret detector, on both sides of each pattern: what it refuses, and what looks close but passes."""

import base64
import hashlib
import json
import random
import struct
import zlib
from pathlib import Path

import mnemonic
import pytest
from Crypto.PublicKey import ECC
from mnemonic import Mnemonic

from kernodeck_chains.base58 import b58check_encode, b58encode
from kernodeck_support.leaks import HEX_KEY, find_secret, secrets_in

ETH_KEY = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
TX_HASH = "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b"
SECRET = bytes(range(1, 33))
XPRV = "xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LJGQqqRe5d6iFq7mg1JRbr6VZBvTvqZrYx"
BIP39 = Mnemonic("english")
PHRASE_12 = BIP39.to_mnemonic(bytes(16))  # "abandon abandon ... about"
PHRASE_24 = BIP39.to_mnemonic(hashlib.sha256(b"kernodeck").digest())


def solana_keypair(seed: bytes) -> bytes:
    return seed + ECC.construct(curve="Ed25519", seed=seed).public_key().export_key(format="raw")


def small_png(side: int = 16) -> bytes:
    """A real PNG of noise, `side` pixels square (its base64 is what a customer pastes from a screenshot tool)."""
    noise = random.Random(7)
    rows = b"".join(b"\0" + bytes(noise.randrange(256) for _ in range(side * 3)) for _ in range(side))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_the_wordlist_is_bip39_english():
    english = Path(mnemonic.__file__).parent / "wordlist" / "english.txt"
    published = "2f5eed53a4727b4bf8880d8f3f199efc90e58503646d9ff8eff3a2ed3b24dbda"  # bitcoin/bips bip-0039
    assert hashlib.sha256(english.read_bytes()).hexdigest() == published
    assert len(BIP39.wordlist) == 2048


pytestmark = pytest.mark.unit

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
    ("cụm từ khôi phục: ...", "a recovery phrase"),
    # Wallet keys, bare.
    (ETH_KEY, HEX_KEY),
    (f"my metamask key 0x{ETH_KEY} please check", HEX_KEY),
    (ETH_KEY.upper(), HEX_KEY),
    ("5HueCGU8rMjxEXxiPuD5BDku4MkFqeZyd4dZ1jvhTVqvbTLvyTJ", "a private key (WIF)"),  # Bitcoin, uncompressed
    (b58check_encode(b"\x80" + SECRET + b"\x01"), "a private key (WIF)"),  # Bitcoin, compressed (K or L)
    ("ltc: " + b58check_encode(b"\xb0" + SECRET + b"\x01"), "a private key (WIF)"),  # Litecoin (T)
    (f"{XPRV} from my wallet", "an extended private key"),
    (b58encode(solana_keypair(SECRET)), "a Solana private key"),
    (f"id.json: {json.dumps(list(solana_keypair(SECRET)))}", "a Solana private key"),
    (PHRASE_12, "a recovery phrase"),
    (PHRASE_24, "a recovery phrase"),
    (" ".join(f"{n}. {word}" for n, word in enumerate(PHRASE_24.split(), 1)), "a recovery phrase"),
    ("\n".join(PHRASE_12.upper().split()), "a recovery phrase"),
    # Passwords in a sentence, in English, Vietnamese and Indonesian.
    ("my password is Summer2024!", "a password"),
    ('the password is "kitten"', "a password"),
    ("mật khẩu: lan12345", "a password"),
    ("mật khẩu của tôi là Matkhau@99", "a password"),
    ("mat khau: lan12345", "a password"),
    ("kata sandi: rahasia123", "a password"),
    ("kata sandi saya adalah Rahasia99", "a password"),
    ("kata sandinya: rahasia", "a password"),
    ("password saya: rahasia", "a password"),
    ("mk: 12345678", "a password"),
    ("pass: lan2024", "a password"),
    # Hidden by Unicode: fullwidth, zero-width and soft hyphens, then NFKC.
    ("".join(chr(ord(c) + 0xFEE0) for c in "password:hunter22"), "a password"),  # fullwidth
    ("pass\u200bword: hunter22", "a password"),
    ("pass\u00adword\ufeff: hunter22", "a password"),
    ("mật\u200c khẩu: lan12345", "a password"),
    (ETH_KEY[:30] + "\u200b" + ETH_KEY[30:], HEX_KEY),
    ("sshpass -p 's3cret' ssh lan@203.0.113.5", "a password on a command line"),
    ("sshpass -v -p hunter22 rsync -a x lan@host:", "a password on a command line"),
    ("stripe sk_live_51HqLyjWDarjtT1zdp7dc", "an access token"),
    ("rk_live_51HqLyjWDarjtT1zdp7dcABC", "an access token"),
    ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: lan\nPublic-Lines: 2", "a PuTTY private key"),
    ("Public-Lines: 2\nAAAA\nPrivate-Lines: 1\nAAAAIG", "a PuTTY private key"),
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
    # Hashes a customer quotes, with what says they are one.
    f"tx {TX_HASH}",
    f"transaction: 0x{TX_HASH}",
    f"Here is the transaction id of my payment, sent an hour ago: {TX_HASH}",
    f"mã giao dịch: {TX_HASH}",
    f"ID transaksi saya {TX_HASH}",
    f"https://etherscan.io/tx/0x{TX_HASH}",
    f"https://mempool.space/tx/{TX_HASH} still unconfirmed",
    f"{TX_HASH}  ubuntu-24.04-live-server-amd64.iso",  # sha256sum's output
    f"Digest: sha256:{TX_HASH}",
    f"commit {TX_HASH} (a SHA-256 repository)",
    f"block hash {TX_HASH}",
    TX_HASH[:63],  # not 64 digits
    TX_HASH + "a",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 broke the build",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "0x742d35Cc6634C0532925a3b844Bc454e4438f44e and bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
    "xpub6CUGRUonZSQ4TWtTMmzXdrXDtypWKiKrhko4egpiMZbpiaQL2jkwSB1icqYh2cfDfVxdx4df189oLKnC5fSwqPfgyP3hooxujYzAu3fDVmz",
    b58encode(random.Random(3).randbytes(64)),  # a Solana transaction signature: 64 bytes, no keypair
    json.dumps(list(random.Random(3).randbytes(64))),
    " ".join(PHRASE_24.split()[:11]),  # 11 words of the list
    # Passwords talked about, not written out.
    "my password is wrong.",
    "the password is incorrect, and reset does not work",
    "Password is required",
    "mật khẩu sai, tôi không đăng nhập được",
    "mật khẩu là gì?",
    "kata sandi salah, saya tidak bisa masuk",
    "kata sandi adalah salah",
    "pass: yes",
    "sshpass -f ~/.pw ssh -p 2222 lan@host",
    "sshpass -p $SSHPASS ssh lan@host",
    "sk_live_",
    "PuTTY generated the key; I use PuTTY 0.81",
]


TECHNICAL_TEXT = [
    """Traceback (most recent call last):
  File "/home/lan/train.py", line 42, in <module>
    model.to(device)
  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1152, in to
    return self._apply(convert)
RuntimeError: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be
incorrect. For debugging consider passing CUDA_LAUNCH_BLOCKING=1.""",
    """commit 3f2a9c0d1e4b5a6978c0ffee1234abcd56789012
Author: Lan Nguyen <lan@example.org>
Date:   Mon Dec 7 10:00:00 2026 +0700

    Fix the data loader: shuffle each epoch, keep the last batch""",
    """$ nvidia-smi
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4     |
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
|   0  NVIDIA H100 80GB HBM3  On| 00000000:18:00.0 Off |                    0 |
+-----------------------------------------------------------------------------+""",
    f"screenshot: data:image/png;base64,{base64.b64encode(small_png()).decode()}",
    f"sha256sum model.safetensors\n{TX_HASH}  model.safetensors",
    "I paid the order yesterday about noon, the page still says waiting; can you check the payment? Thanks!",
    "Tôi đã thanh toán đơn hàng hôm qua nhưng trang vẫn báo đang chờ. Bạn kiểm tra giúp tôi với.",
    "Saya sudah membayar pesanan kemarin tetapi halaman masih menunggu. Tolong dicek pembayarannya.",
    "docker pull nvcr.io/nvidia/pytorch:24.05-py3 && python -c 'import torch; print(torch.cuda.is_available())'",
]


@pytest.mark.parametrize("text", TECHNICAL_TEXT)
def test_plain_technical_text_passes(text):
    assert find_secret(text) is None


def test_hash_words_say_so_within_reach_and_on_their_line_only():
    assert find_secret("tx " + " " * 44 + TX_HASH) is None  # 47 characters before the digits
    assert find_secret("tx " + " " * 46 + TX_HASH) == HEX_KEY  # 49: beyond the reach
    assert find_secret(f"tx\n{TX_HASH}") == HEX_KEY
    assert find_secret(f"tx {TX_HASH} and {ETH_KEY}") == HEX_KEY  # each one needs its own


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
