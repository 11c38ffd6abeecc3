"""Test-only helpers.

Production never holds a private key. To check public derivation against
published mnemonic vectors, the tests derive account keys here with BIP39 +
BIP32 private derivation, a path that exists only in test code.
"""

import hashlib
import hmac
from dataclasses import dataclass

import pytest
from coincurve import PrivateKey

from kernodeck_chains.base58 import b58check_encode
from kernodeck_chains.hashes import hash160

ABANDON_MNEMONIC = " ".join(["abandon"] * 11 + ["about"])
SECP256K1_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
HARDENED = 0x8000_0000
VERSION_BYTES = {"xpub": "0488b21e", "zpub": "04b24746", "tpub": "043587cf", "vpub": "045f1cf6"}


@dataclass(frozen=True)
class PrivateNode:
    secret: int
    chain_code: bytes
    depth: int = 0
    parent_fingerprint: bytes = bytes(4)
    child_number: int = 0

    @property
    def public_key(self) -> bytes:
        return PrivateKey(self.secret.to_bytes(32, "big")).public_key.format(compressed=True)

    @property
    def uncompressed_public_key(self) -> bytes:
        return PrivateKey(self.secret.to_bytes(32, "big")).public_key.format(compressed=False)

    def child(self, index: int) -> "PrivateNode":
        if index >= HARDENED:
            data = b"\0" + self.secret.to_bytes(32, "big") + index.to_bytes(4, "big")
        else:
            data = self.public_key + index.to_bytes(4, "big")
        digest = hmac.new(self.chain_code, data, hashlib.sha512).digest()
        secret = (int.from_bytes(digest[:32], "big") + self.secret) % SECP256K1_ORDER
        return PrivateNode(secret, digest[32:], self.depth + 1, hash160(self.public_key)[:4], index)

    def xpub(self, version: str = "xpub") -> str:
        return b58check_encode(
            bytes.fromhex(VERSION_BYTES[version])
            + bytes([self.depth])
            + self.parent_fingerprint
            + self.child_number.to_bytes(4, "big")
            + self.chain_code
            + self.public_key
        )


def _parse_path(path: str) -> list[int]:
    steps = path.split("/")
    assert steps[0] == "m"
    return [int(step[:-1]) + HARDENED if step.endswith("'") else int(step) for step in steps[1:]]


def derive_private(mnemonic: str, path: str) -> PrivateNode:
    seed = hashlib.pbkdf2_hmac("sha512", mnemonic.encode(), b"mnemonic", 2048)
    digest = hmac.new(b"Bitcoin seed", seed, hashlib.sha512).digest()
    node = PrivateNode(int.from_bytes(digest[:32], "big"), digest[32:])
    for index in _parse_path(path):
        node = node.child(index)
    return node


@pytest.fixture
def private_node():
    """derive(path, mnemonic=ABANDON_MNEMONIC) -> PrivateNode."""

    def derive(path: str, mnemonic: str = ABANDON_MNEMONIC) -> PrivateNode:
        return derive_private(mnemonic, path)

    return derive
