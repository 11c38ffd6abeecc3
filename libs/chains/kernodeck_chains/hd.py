"""BIP32 extended public keys: parsing and non-hardened child derivation.

Watch-only by construction: this module reads extended *public* keys and
derives public children. It refuses extended private keys, and no error
message repeats the key text, so a pasted private key never reaches a log.
"""

import hashlib
import hmac
from dataclasses import dataclass

from coincurve import PublicKey

from .base58 import b58check_decode
from .hashes import hash160

HARDENED = 0x8000_0000
MAX_INDEX = 0xFFFF_FFFF
MAX_DEPTH = 255
_SERIALIZED_LENGTH = 78

# SLIP-132 public version bytes. The prefix tells which address type the key's
# owner expects; which prefixes a network accepts is decided in networks.py.
PUBLIC_VERSIONS: dict[bytes, str] = {
    bytes.fromhex("0488b21e"): "xpub",
    bytes.fromhex("049d7cb2"): "ypub",
    bytes.fromhex("04b24746"): "zpub",
    bytes.fromhex("043587cf"): "tpub",
    bytes.fromhex("044a5262"): "upub",
    bytes.fromhex("045f1cf6"): "vpub",
    bytes.fromhex("019da462"): "Ltub",
    bytes.fromhex("01b26ef6"): "Mtub",
    bytes.fromhex("0436f6e1"): "ttub",
}


class ExtendedKeyError(ValueError):
    """The text is not a usable extended public key."""


class ExtendedPrivateKeyError(ExtendedKeyError):
    """The text is an extended PRIVATE key: a secret that must never be configured in a watch-only service."""


class ChildIndexError(ValueError):
    """No public child can be derived at this index."""


@dataclass(frozen=True, slots=True)
class ExtendedPublicKey:
    version: str
    depth: int
    parent_fingerprint: bytes
    child_number: int
    chain_code: bytes
    public_key: bytes  # 33-byte compressed SEC1 point

    @property
    def uncompressed_public_key(self) -> bytes:
        """65-byte SEC1 point (0x04 || X || Y), as Ethereum and Tron hash it."""
        return PublicKey(self.public_key).format(compressed=False)

    @property
    def fingerprint(self) -> bytes:
        return hash160(self.public_key)[:4]


def parse_extended_public_key(text: str) -> ExtendedPublicKey:
    if not isinstance(text, str):
        raise ExtendedKeyError("an extended public key must be text")
    try:
        payload = b58check_decode(text.strip())
    except ValueError as error:
        raise ExtendedKeyError(f"not valid base58check: {error}") from None
    if len(payload) != _SERIALIZED_LENGTH:
        raise ExtendedKeyError(f"decodes to {len(payload)} bytes, expected {_SERIALIZED_LENGTH}")
    key = payload[45:]
    if key[0] == 0:
        raise ExtendedPrivateKeyError("this is an extended PRIVATE key; the service is watch-only and refuses it")
    version = PUBLIC_VERSIONS.get(payload[:4])
    if version is None:
        raise ExtendedKeyError(f"unknown extended public key version {payload[:4].hex()}")
    depth = payload[4]
    parent_fingerprint = payload[5:9]
    child_number = int.from_bytes(payload[9:13], "big")
    if depth == 0 and (parent_fingerprint != bytes(4) or child_number != 0):
        raise ExtendedKeyError("a depth-0 key must have a zero parent fingerprint and child number")
    if key[0] not in (2, 3):
        raise ExtendedKeyError("the public key is not a compressed point")
    try:
        PublicKey(key)
    except ValueError:
        raise ExtendedKeyError("the public key is not a point on secp256k1") from None
    return ExtendedPublicKey(version, depth, parent_fingerprint, child_number, payload[13:45], key)


def _hmac_sha512(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha512).digest()


def _check_child_index(index: int) -> None:
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"a child index must be an int, not {type(index).__name__}")
    if index < 0 or index > MAX_INDEX:
        raise ChildIndexError(f"child index {index} is outside 0..{MAX_INDEX}")
    if index >= HARDENED:
        raise ChildIndexError(
            f"child index {index} is hardened (>= 2**31): it needs the private key, "
            "which this watch-only service never holds"
        )


def derive_public_child(parent: ExtendedPublicKey, index: int) -> ExtendedPublicKey:
    """BIP32 CKDpub for a non-hardened index."""
    _check_child_index(index)
    if parent.depth == MAX_DEPTH:
        raise ChildIndexError(f"a key at depth {MAX_DEPTH} has no serializable children")
    digest = _hmac_sha512(parent.chain_code, parent.public_key + index.to_bytes(4, "big"))
    tweak, chain_code = digest[:32], digest[32:]
    try:
        child_key = PublicKey(parent.public_key).add(tweak)
    except ValueError:
        # Probability about 2**-127; BIP32 says to move on to the next index.
        raise ChildIndexError(f"child index {index} gives an invalid key; use the next index") from None
    return ExtendedPublicKey(
        version=parent.version,
        depth=parent.depth + 1,
        parent_fingerprint=parent.fingerprint,
        child_number=index,
        chain_code=chain_code,
        public_key=child_key.format(compressed=True),
    )
