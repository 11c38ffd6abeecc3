"""What looks like a secret in a support request or an operator's answer: refused before anything is stored.

Support never needs a password, a key or a token, and requests and answers are read by people (an answer
also goes to the order's timeline and by Telegram). Each pattern names what
it found, never the text itself (the refusal must not echo the secret back). Transaction ids, addresses,
public keys and ordinary code (a tokenizer, `max_tokens=2048`, `pad_token = tokenizer.eos_token`) pass.
"""

import re

_VALUE_WITH_DIGIT = r"""["']?(?=[A-Za-z_+/=-]*\d)[A-Za-z0-9_+/=-]{16,}"""
_SETTING_NAME = r"(?:token|secret|api[_-]?key|secret[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret)"

PATTERNS: tuple[tuple[str, re.Pattern], ...] = tuple(
    (what, re.compile(pattern, flags))
    for what, pattern, flags in (
        ("a private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", 0),
        (
            "an Authorization header",
            r"\bauthorization\b[\"']?\s*[:=]\s*[\"']?\s*(?:bearer|basic|token|digest)\s+[A-Za-z0-9._~+/=-]{8,}",
            re.IGNORECASE,
        ),
        ("a bearer token", r"\bbearer\s+[A-Za-z0-9._~+/-]{20,}", re.IGNORECASE),
        (
            "a password",
            r"\b(?:\w*[_-])?(?:password|passwd|passphrase|pwd)\b[\"']?\s*[:=]\s*[\"']?(?![$<{*%]|os\.|getenv)[^\s\"',;]{3,}",
            re.IGNORECASE,
        ),
        ("a password on a command line", r"--(?:password|passwd)[= ]\s*(?![$<{*])\S{3,}", re.IGNORECASE),
        ("credentials in a URL", r"\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]{3,}@", re.IGNORECASE),
        (
            "an access token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{40,}|glpat-[\w-]{20,}|hf_[A-Za-z0-9]{30,}"
            r"|sk-(?:proj-|ant-)?[\w-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[\w-]{35})",
            0,
        ),
        ("a JSON web token", r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}", 0),
        ("a Telegram bot token", r"\b\d{8,10}:AA[\w-]{33}\b", 0),
        (
            "a secret setting",
            rf"\b(?:\w*[_-])?{_SETTING_NAME}\b[\"']?\s*[:=]\s*{_VALUE_WITH_DIGIT}",
            re.IGNORECASE,
        ),
        ("a recovery phrase", r"\b(?:seed|mnemonic|recovery)\s+(?:phrase|words)\s*[:=]", re.IGNORECASE),
    )
)


def find_secret(text: str) -> str | None:
    """What the text seems to hold ("a private key"), or None."""
    for what, pattern in PATTERNS:
        if pattern.search(text):
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
