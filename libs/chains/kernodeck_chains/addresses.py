"""Address encoders and validators, each a small pure function.

Encoders take public keys; validators take text that an operator typed or
pasted and answer True only for a well-formed address of that network.
"""

from .base58 import b58check_decode, b58check_encode, b58decode
from .bech32 import decode_segwit_address, encode_segwit_address
from .hashes import hash160, keccak256
from .networks import ChainParams

TRON_PREFIX = 0x41
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _check_compressed(public_key: bytes) -> None:
    if len(public_key) != 33 or public_key[0] not in (2, 3):
        raise ValueError("expected a 33-byte compressed public key")


def _account_id(uncompressed_public_key: bytes) -> bytes:
    """Last 20 bytes of keccak-256 of X || Y: the Ethereum and Tron account id."""
    if len(uncompressed_public_key) != 65 or uncompressed_public_key[0] != 4:
        raise ValueError("expected a 65-byte uncompressed public key")
    return keccak256(uncompressed_public_key[1:])[-20:]


def p2wpkh_address(compressed_public_key: bytes, hrp: str) -> str:
    """Segwit v0 pay-to-witness-public-key-hash address (BIP173, BIP84)."""
    _check_compressed(compressed_public_key)
    return encode_segwit_address(hrp, 0, hash160(compressed_public_key))


def eip55_checksum(account_id: bytes) -> str:
    """0x-prefixed hex with EIP-55 mixed-case checksum."""
    if len(account_id) != 20:
        raise ValueError("an Ethereum address is 20 bytes")
    lower = account_id.hex()
    digest = keccak256(lower.encode("ascii")).hex()[: len(lower)]
    # A hex letter is upper-cased where the hash's matching nibble is >= 8.
    cased = (char.upper() if int(nibble, 16) >= 8 else char for char, nibble in zip(lower, digest, strict=True))
    return "0x" + "".join(cased)


def ethereum_address(uncompressed_public_key: bytes) -> str:
    return eip55_checksum(_account_id(uncompressed_public_key))


def tron_address(uncompressed_public_key: bytes) -> str:
    """Base58Check of 0x41 || account id: the T... form."""
    return tron_address_of(_account_id(uncompressed_public_key))


def tron_address_of(account_id: bytes) -> str:
    """The T... form of a 20-byte account id (the EVM address a TRC-20 log names)."""
    if len(account_id) != 20:
        raise ValueError("a Tron account id is 20 bytes")
    return b58check_encode(bytes([TRON_PREFIX]) + account_id)


def tron_hex_address(address: str) -> str:
    """The 41... hex form of a T... address, as Tron's node APIs show it."""
    return (bytes([TRON_PREFIX]) + tron_account_id(address)).hex()


def tron_account_id(address: str) -> bytes:
    """The 20-byte account id of a T... address (what a TRC-20 log names); ValueError for text that is none."""
    payload = b58check_decode(address) if isinstance(address, str) and len(address) == 34 else b""
    if len(payload) != 21 or payload[0] != TRON_PREFIX:
        raise ValueError("not a valid Tron address")
    return payload[1:]


def _is_valid_utxo_address(address: str, params: ChainParams) -> bool:
    if not isinstance(address, str):
        return False
    if params.bech32_hrp and address.lower().startswith(params.bech32_hrp + "1"):
        try:
            decode_segwit_address(params.bech32_hrp, address)
        except ValueError:
            return False
        return True
    try:
        payload = b58check_decode(address)
    except ValueError:
        return False
    return len(payload) == 21 and payload[0] in params.legacy_versions


def _require_network(params: ChainParams, network: str) -> None:
    if params.network != network:
        raise ValueError(f"parameters are for {params.network}, not {network}")


def is_valid_bitcoin_address(address: str, params: ChainParams) -> bool:
    """P2PKH, P2SH, or any segwit version (BIP173/BIP350) on params' chain."""
    _require_network(params, "bitcoin")
    return _is_valid_utxo_address(address, params)


def is_valid_litecoin_address(address: str, params: ChainParams) -> bool:
    """L/M (mainnet) or m/n/Q (testnet) legacy addresses, or segwit."""
    _require_network(params, "litecoin")
    return _is_valid_utxo_address(address, params)


def is_valid_ethereum_address(address: str) -> bool:
    """0x + 40 hex digits; mixed case must match its EIP-55 checksum.

    Single-case text carries no checksum and is accepted, as in ethers and
    web3: EIP-55 cannot tell a lower-case address from a mistyped one.
    """
    if not isinstance(address, str) or len(address) != 42 or not address.startswith("0x"):
        return False
    body = address[2:]
    if not _HEX_DIGITS.issuperset(body):
        return False
    if body in (body.lower(), body.upper()):
        return True
    return address == eip55_checksum(bytes.fromhex(body))


def is_valid_tron_address(address: str) -> bool:
    try:
        tron_account_id(address)
    except ValueError:
        return False
    return True


_ED25519_P = 2**255 - 19
_ED25519_D = -121665 * pow(121666, -1, _ED25519_P) % _ED25519_P


def _is_on_ed25519_curve(encoded: bytes) -> bool:
    """RFC 8032 point decoding, short of computing x: does x exist?"""
    y = int.from_bytes(encoded, "little")
    sign = y >> 255
    y &= (1 << 255) - 1
    if y >= _ED25519_P:
        return False
    y2 = y * y % _ED25519_P
    x2 = (y2 - 1) * pow(_ED25519_D * y2 + 1, -1, _ED25519_P) % _ED25519_P
    if x2 == 0:
        return sign == 0
    return pow(x2, (_ED25519_P - 1) // 2, _ED25519_P) == 1


def is_valid_solana_address(address: str) -> bool:
    """Base58 of a 32-byte ed25519 public key that lies on the curve.

    Off-curve addresses (program-derived addresses) have no private key: a
    deposit pool entry must be one a wallet can sign for.
    """
    if not isinstance(address, str) or not 32 <= len(address) <= 44:
        return False
    try:
        key = b58decode(address)
    except ValueError:
        return False
    return len(key) == 32 and _is_on_ed25519_curve(key)
