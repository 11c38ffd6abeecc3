"""The hash functions that address and key formats are built on."""

import hashlib

from Crypto.Hash import RIPEMD160, keccak


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def double_sha256(data: bytes) -> bytes:
    return sha256(sha256(data))


def hash160(data: bytes) -> bytes:
    """RIPEMD-160 of SHA-256, the key hash of P2WPKH and BIP32 fingerprints."""
    # pycryptodome rather than hashlib: OpenSSL 3 builds may not offer ripemd160.
    return RIPEMD160.new(sha256(data)).digest()


def keccak256(data: bytes) -> bytes:
    """Ethereum's Keccak-256 (the pre-standard padding, not NIST SHA3-256)."""
    return keccak.new(data=data, digest_bits=256).digest()
