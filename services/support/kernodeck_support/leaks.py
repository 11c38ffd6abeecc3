"""What looks like a secret in a support request or an operator's answer: refused before anything is stored.

Support never needs a password, a key or a token, and requests and answers are read by people (an answer
also goes to the order's timeline and by Telegram). Each detector names what it found, never the text
itself (the refusal must not echo the secret back). The text is read as NFKC with zero-width characters
removed, so fullwidth letters or a zero-width space inside "password:" hide nothing.

Wallet keys are what crypto customers paste: 64 hex digits (an Ethereum or Tron private key), a WIF key
(Bitcoin, Litecoin), an extended private key, a Solana keypair (checked: its second half is the public key
of its first), 12 to 24 words of the BIP39 English list. A transaction id is 64 hex digits too: one with
"tx", "hash", "transaction", "giao dịch", "transaksi" (and the like) written shortly before it, inside a
URL (an explorer's link) or in a `sha256sum` line passes. Addresses, public keys, commit hashes, UUIDs and
ordinary code (a tokenizer, `max_tokens=2048`, `pad_token = tokenizer.eos_token`) pass.
"""

import json
import re
import unicodedata
from collections.abc import Callable

from Crypto.PublicKey import ECC
from mnemonic import Mnemonic

from kernodeck_chains.base58 import b58check_decode, b58decode

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\ufeff"), None)
_BASE58 = "1-9A-HJ-NP-Za-km-z"


def normalized(text: str) -> str:
    return unicodedata.normalize("NFKC", text.translate(_ZERO_WIDTH))


# --- passwords ---------------------------------------------------------------------------------------------

_POSSESSIVE = r"(?:nya|\s+(?:saya|aku|ku|tôi|của\s+tôi|em|mình|anh|chị))?"
_PASSWORD_WORD = (
    rf"(?:\w*[_-])?(?:password|passwd|passphrase|pwd|mật\s*khẩu|mat\s*khau|kata\s*sandi|sandi){_POSSESSIVE}"
)
_NOT_A_VALUE = r"(?![$<{*%]|os\.|getenv)"
_PASSWORD_LABEL = re.compile(
    rf"\b{_PASSWORD_WORD}\b[\"']?\s*[:=]\s*[\"']?{_NOT_A_VALUE}[^\s\"',;]{{3,}}", re.IGNORECASE
)
# Short labels ("pass: ...", Vietnamese "mk: ...") name a password only when a digit follows in the value.
_SHORT_LABEL = re.compile(r"\b(?:pass|pw|mk)\s*[:=]\s*[\"']?(?=[^\s\"',;]*\d)[^\s\"',;]{4,}", re.IGNORECASE)
# "my password is X", "mật khẩu (của tôi) là X", "kata sandi(nya) adalah X": X is judged by _password_like.
_PASSWORD_SENTENCE = re.compile(
    rf"\b{_PASSWORD_WORD}\s+(?:is|was|là|adalah|ialah|yaitu|yakni)\s*:?\s*(?P<value>\S+)", re.IGNORECASE
)


def _password_like(value: str) -> bool:
    """A word after "password is" that reads as a password: quoted, or with a digit, a symbol or a capital
    letter past the first ("wrong", "incorrect", "sai", "salah" read as words)."""
    if value[0] in "\"'`" and len(value.strip("\"'`.,;:!?)")) >= 3:
        return True
    value = value.rstrip(".,;:!?)")
    return len(value) >= 4 and (
        any(c.isdigit() or not c.isalnum() for c in value) or any(c.isupper() for c in value[1:])
    )


def _password_in_a_sentence(text: str) -> bool:
    return any(_password_like(match["value"]) for match in _PASSWORD_SENTENCE.finditer(text))


# --- wallet keys -------------------------------------------------------------------------------------------

_HEX_64 = re.compile(r"(?<![0-9A-Za-z])(?:0x)?[0-9a-fA-F]{64}(?![0-9A-Za-z])")
_HASH_CONTEXT = re.compile(
    r"\b(?:tx|txid|txn|txhash|tx_hash|hash|hashes|transaction|transactions|trans|sha-?256|sha256sum|sha3|keccak"
    r"|checksum|digest|commit|block|blockhash|giao\s*dịch|mã\s*băm|băm|transaksi)\b",
    re.IGNORECASE,
)
_HASH_CONTEXT_REACH = 48  # characters before the digits, on their line
_SHA256SUM_LINE = re.compile(r"^\s*[0-9a-fA-F]{64}\s+\*?\S+\s*$", re.MULTILINE)


def _hex_key(text: str) -> bool:
    """64 hex digits with nothing around them that says they are a hash."""
    sums = [line.span() for line in _SHA256SUM_LINE.finditer(text)]
    for match in _HEX_64.finditer(text):
        start = match.start()
        if any(first <= start < end for first, end in sums):
            continue
        before = text[max(0, start - _HASH_CONTEXT_REACH) : start].rsplit("\n", 1)[-1]
        if before.endswith(("/", "=")) or _HASH_CONTEXT.search(before):  # an explorer's link, tx=...
            continue
        return True
    return False


_WIF = re.compile(rf"(?<![{_BASE58}])[5KLc9T6][{_BASE58}]{{50,51}}(?![{_BASE58}])")
_WIF_VERSIONS = {0x80, 0xB0, 0xEF}  # Bitcoin and Litecoin mainnet, testnets


def _wif_key(text: str) -> bool:
    for match in _WIF.finditer(text):
        try:
            payload = b58check_decode(match.group())
        except ValueError:
            continue
        if payload[0] in _WIF_VERSIONS and (len(payload) == 33 or (len(payload) == 34 and payload[-1] == 1)):
            return True
    return False


_EXTENDED_PRIVATE_KEY = re.compile(rf"\b[xyztuvYZUV]prv[{_BASE58}]{{100,}}")
_SOLANA_BASE58 = re.compile(rf"(?<![{_BASE58}])[{_BASE58}]{{80,90}}(?![{_BASE58}])")
_BYTE_ARRAY = re.compile(r"\[\s*(?:\d{1,3}\s*,\s*){63}\d{1,3}\s*\]")


def _ed25519_keypair(secret: bytes) -> bool:
    """Whether 64 bytes are a Solana keypair: a seed, then its own public key (a signature is not)."""
    if len(secret) != 64:
        return False
    return ECC.construct(curve="Ed25519", seed=secret[:32]).public_key().export_key(format="raw") == secret[32:]


def _solana_keypair(text: str) -> bool:
    for match in _SOLANA_BASE58.finditer(text):
        try:
            if _ed25519_keypair(b58decode(match.group())):
                return True
        except ValueError:
            continue
    for match in _BYTE_ARRAY.finditer(text):
        numbers = json.loads(match.group())
        if all(n < 256 for n in numbers) and _ed25519_keypair(bytes(numbers)):
            return True
    return False


_BIP39 = frozenset(Mnemonic("english").wordlist)
_PHRASE_WORDS = 12
_WORD = re.compile(r"[a-z]+")
_BETWEEN_WORDS = re.compile(r"[\s\d.,;:()\-]*")  # spaces, commas, a numbered list's "1." or "2)"


def _recovery_phrase(text: str) -> bool:
    """12 words or more of the BIP39 English list in a row, however numbered or separated."""
    text = text.lower()
    run, end = 0, None
    for word in _WORD.finditer(text):
        if word.group() not in _BIP39:
            run, end = 0, None
            continue
        joined = end is not None and _BETWEEN_WORDS.fullmatch(text, end, word.start()) is not None
        run = run + 1 if joined else 1
        end = word.end()
        if run >= _PHRASE_WORDS:
            return True
    return False


# --- everything else ---------------------------------------------------------------------------------------

_VALUE_WITH_DIGIT = r"""["']?(?=[A-Za-z_+/=-]*\d)[A-Za-z0-9_+/=-]{16,}"""
_SETTING_NAME = r"(?:token|secret|api[_-]?key|secret[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret)"


def _found(pattern: str, flags: int = 0) -> Callable[[str], bool]:
    compiled = re.compile(pattern, flags)
    return lambda text: compiled.search(text) is not None


HEX_KEY = "a private key (64 hex digits; a transaction id or a hash passes with tx or hash written before it)"

DETECTORS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    ("a private key", _found(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("a PuTTY private key", _found(r"PuTTY-User-Key-File-\d+\s*:|^Private-(?:Lines|MAC)\s*:", re.MULTILINE)),
    (
        "an Authorization header",
        _found(
            r"\bauthorization\b[\"']?\s*[:=]\s*[\"']?\s*(?:bearer|basic|token|digest)\s+[A-Za-z0-9._~+/=-]{8,}",
            re.IGNORECASE,
        ),
    ),
    ("a bearer token", _found(r"\bbearer\s+[A-Za-z0-9._~+/-]{20,}", re.IGNORECASE)),
    ("a password", lambda text: _PASSWORD_LABEL.search(text) is not None),
    ("a password", _password_in_a_sentence),
    ("a password", lambda text: _SHORT_LABEL.search(text) is not None),
    (
        "a password on a command line",
        _found(
            r"--(?:password|passwd)[= ]\s*(?![$<{*])\S{3,}"
            r"|\bsshpass(?:\s+-[dfP]\s*\S+|\s+-[ehvV])*\s+-p\s*(?![$<{*])\S{3,}",  # its own options before -p
            re.IGNORECASE,
        ),
    ),
    ("credentials in a URL", _found(r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]{3,}@", re.IGNORECASE)),
    (
        "an access token",
        _found(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{40,}|glpat-[\w-]{20,}|hf_[A-Za-z0-9]{30,}"
            r"|sk-(?:proj-|ant-)?[\w-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[\w-]{35}"
            r"|(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{10,}|whsec_[A-Za-z0-9]{20,})"
        ),
    ),
    ("a JSON web token", _found(r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}")),
    ("a Telegram bot token", _found(r"\b\d{8,10}:AA[\w-]{33}\b")),
    (
        "a secret setting",
        _found(rf"\b(?:\w*[_-])?{_SETTING_NAME}\b[\"']?\s*[:=]\s*{_VALUE_WITH_DIGIT}", re.IGNORECASE),
    ),
    (
        "a recovery phrase",
        _found(
            r"\b(?:(?:seed|mnemonic|recovery)\s+(?:phrase|words)|cụm\s+từ\s+khôi\s+phục|frasa\s+(?:pemulihan|benih))"
            r"\s*[:=]",
            re.IGNORECASE,
        ),
    ),
    ("a recovery phrase", _recovery_phrase),
    ("an extended private key", lambda text: _EXTENDED_PRIVATE_KEY.search(text) is not None),
    ("a private key (WIF)", _wif_key),
    ("a Solana private key", _solana_keypair),
    (HEX_KEY, _hex_key),
)


def find_secret(text: str) -> str | None:
    """What the text seems to hold ("a private key"), or None."""
    text = normalized(text)
    for what, found in DETECTORS:
        if found(text):
            return what
    return None


def secrets_in(fields: dict[str, str | None], sent: str = "request") -> list[dict]:
    """One {"field", "message"} per field that looks like it holds a secret; `sent`: what the fields make up."""
    found = []
    for name, text in fields.items():
        what = find_secret(text) if text else None
        if what is not None:
            found.append({"field": name, "message": f"looks like {what}: remove it and send the {sent} again"})
    return found
