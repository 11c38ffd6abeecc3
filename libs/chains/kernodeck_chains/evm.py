"""EVM ABI primitives, shared by Ethereum and Tron (whose TRC-20 tokens run on the same virtual machine)."""

from .hashes import keccak256


def selector(signature: str) -> bytes:
    """The 4 bytes that pick the function ``signature`` (e.g. ``"transfer(address,uint256)"``)."""
    return keccak256(signature.encode())[:4]


def event_topic(signature: str) -> str:
    """topic0 of the event ``signature``, as 64 hex digits without 0x (Tron's spelling; Ethereum's adds 0x)."""
    return keccak256(signature.encode()).hex()


# The ERC-20 (and ERC-721) Transfer event; a TRC-20 transfer emits the same log.
TRANSFER_TOPIC = event_topic("Transfer(address,address,uint256)")
