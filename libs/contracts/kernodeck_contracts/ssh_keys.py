"""OpenSSH public keys as customers paste them: checked once, kept in one canonical form.

Orders checks the key given with an order, provisioning the account's key and
the key it installs; both use this one rule. Only the key type and its data
are kept: a comment or an authorized_keys option never reaches a node.
"""

import base64
import binascii
import struct

MAX_KEY_CHARS = 16_384
MIN_RSA_BITS = 2048
KEY_TYPES = (
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "ssh-rsa",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
)


class InvalidSshKey(ValueError):
    """The text is not one OpenSSH public key of a type and size we accept."""


def canonical_ssh_key(text: str) -> str:
    """`type base64` for a valid key; raises InvalidSshKey with the reason otherwise."""
    if not isinstance(text, str):
        raise InvalidSshKey("an SSH public key is text")
    if len(text) > MAX_KEY_CHARS:
        raise InvalidSshKey(f"an SSH public key is at most {MAX_KEY_CHARS} characters")
    if "\n" in text.strip() or "\r" in text.strip():
        raise InvalidSshKey("give exactly one key, on one line")
    parts = text.split()
    if len(parts) < 2:
        raise InvalidSshKey("expected `type base64 [comment]`, as in a .pub file")
    key_type, data = parts[0], parts[1]
    if key_type not in KEY_TYPES:
        raise InvalidSshKey(f"key type {key_type!r} is not one of {', '.join(KEY_TYPES)}")
    try:
        blob = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise InvalidSshKey("the key data is not valid base64") from None
    fields = _ssh_strings(blob)
    if not fields or fields[0] != key_type.encode():
        raise InvalidSshKey("the key data does not match its type")
    if key_type == "ssh-ed25519" and (len(fields) != 2 or len(fields[1]) != 32):
        raise InvalidSshKey("an ed25519 key holds 32 bytes")
    if key_type == "ssh-rsa":
        if len(fields) != 3:
            raise InvalidSshKey("an RSA key holds an exponent and a modulus")
        bits = int.from_bytes(fields[2], "big").bit_length()
        if bits < MIN_RSA_BITS:
            raise InvalidSshKey(f"an RSA key needs at least {MIN_RSA_BITS} bits (this one has {bits})")
    return f"{key_type} {data}"


def _ssh_strings(blob: bytes) -> list[bytes] | None:
    """The length-prefixed strings of an SSH wire blob; None when it is cut short or has trailing bytes."""
    fields, offset = [], 0
    while offset < len(blob):
        if offset + 4 > len(blob):
            return None
        (length,) = struct.unpack(">I", blob[offset : offset + 4])
        offset += 4
        if offset + length > len(blob):
            return None
        fields.append(blob[offset : offset + length])
        offset += length
    return fields
