"""Tron address spellings: base58check (T...), hex with the 0x41 prefix, and the EVM's 20 bytes.

The account id is the same 20 bytes on Tron and on the EVM that runs the
double's contracts; Tron only adds the 0x41 byte and a base58check text form.
"""

from kernodeck_chains.addresses import TRON_PREFIX, tron_hex_address
from kernodeck_chains.base58 import b58check_encode

PREFIX = f"{TRON_PREFIX:02x}"


def is_base58(address: str) -> bool:
    return address.startswith("T")


def to_hex(address: str) -> str:
    """41-prefixed hex (42 digits) from either spelling."""
    if is_base58(address):
        return tron_hex_address(address)
    if len(address) != 42 or not address.lower().startswith(PREFIX):
        raise ValueError(f"not a Tron hex address: {address}")
    bytes.fromhex(address)
    return address.lower()


def to_base58(address: str) -> str:
    return b58check_encode(bytes.fromhex(to_hex(address)))


def parse(address: str, visible: bool) -> str:
    """An address field of a request, strictly in the spelling `visible` announces, as 41-hex."""
    if not isinstance(address, str) or is_base58(address) != visible:
        raise ValueError(f"invalid address {address!r} for visible={visible}")
    return to_hex(address)


def to_evm(address: str) -> str:
    return "0x" + to_hex(address)[2:]


def from_evm(address: str) -> str:
    """41-hex from a 0x-prefixed (or bare) 20-byte EVM address."""
    body = address.lower().removeprefix("0x")
    if len(body) != 40:
        raise ValueError(f"not a 20-byte address: {address}")
    return PREFIX + body
