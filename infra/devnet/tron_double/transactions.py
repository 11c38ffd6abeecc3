"""Transactions as the node API shows them (visible=false form): build, id, sign, recover the signer."""

import time

import coincurve

from kernodeck_chains.addresses import tron_address

from . import protobuf
from .addresses import to_hex

EXPIRATION_MS = 60_000


def now_ms() -> int:
    return int(time.time() * 1000)


def build(kind: str, value: dict, head_block_id: str, head_timestamp_ms: int, fee_limit: int = 0) -> dict:
    """An unsigned transaction referring to the head block (TAPoS), as createtransaction returns it."""
    raw_data = {
        "contract": [{"parameter": {"value": value, "type_url": protobuf.TYPE_URL.format(kind)}, "type": kind}],
        "ref_block_bytes": head_block_id[12:16],
        "ref_block_hash": head_block_id[16:32],
        "expiration": head_timestamp_ms + EXPIRATION_MS,
        "timestamp": now_ms(),
    }
    if fee_limit:
        raw_data["fee_limit"] = fee_limit
    return identified({"raw_data": raw_data})


def identified(tx: dict) -> dict:
    """`tx` with the txID and raw_data_hex that its raw_data gives (what a client sent for them is ignored)."""
    raw = protobuf.transaction_raw(tx["raw_data"])
    out = {"txID": protobuf.transaction_id(raw), "raw_data": tx["raw_data"], "raw_data_hex": raw.hex()}
    if tx.get("signature"):
        out = {"signature": list(tx["signature"]), **out}
    return out


def contract(tx: dict) -> tuple[str, dict]:
    """(type, parameter value) of the transaction's one contract."""
    first = tx["raw_data"]["contract"][0]
    return first["type"], first["parameter"]["value"]


def sign(tx: dict, private_key: str) -> dict:
    key = coincurve.PrivateKey(bytes.fromhex(private_key.removeprefix("0x")))
    signature = key.sign_recoverable(bytes.fromhex(tx["txID"]), hasher=None).hex()
    return {"signature": [*tx.get("signature", []), signature], **{k: v for k, v in tx.items() if k != "signature"}}


def signer(tx: dict) -> str:
    """41-hex account of the key behind the first signature; ValueError when there is none to recover."""
    if not tx.get("signature"):
        raise ValueError("no signature")
    signature = bytearray(bytes.fromhex(tx["signature"][0]))
    if len(signature) != 65:
        raise ValueError("a signature is 65 bytes")
    if signature[64] >= 27:  # wallets write v as 27/28 or as 0/1
        signature[64] -= 27
    public_key = coincurve.PublicKey.from_signature_and_message(
        bytes(signature), bytes.fromhex(tx["txID"]), hasher=None
    )
    return to_hex(tron_address(public_key.format(compressed=False)))


def size(tx: dict) -> int:
    """Bytes of the signed transaction: the bandwidth Tron charges for it."""
    raw = len(tx["raw_data_hex"]) // 2
    return 1 + len(protobuf.varint(raw)) + raw + 67 * len(tx.get("signature", []))
