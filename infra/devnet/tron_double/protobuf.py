"""The protobuf bytes of a transaction's and a block header's `raw` message (Tron.proto).

A Tron transaction id is sha256 of `Transaction.raw`, and a block id is the
height followed by the last 24 bytes of sha256 of `BlockHeader.raw`; wallets
such as TronWeb check `raw_data_hex` against `raw_data`. Only the fields the
double produces are encoded, in field-number order, defaults left out as
protobuf does.
"""

import hashlib

# Transaction.Contract.ContractType
CONTRACT_TYPES = {"TransferContract": 1, "CreateSmartContract": 30, "TriggerSmartContract": 31}
TYPE_URL = "type.googleapis.com/protocol.{}"


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # int64 negatives are ten-byte two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field: int, value: int) -> bytes:
    return varint(field << 3) + varint(value) if value else b""


def _bytes(field: int, value: bytes) -> bytes:
    return varint(field << 3 | 2) + varint(len(value)) + value if value else b""


def _hex(field: int, value: str | None) -> bytes:
    return _bytes(field, bytes.fromhex(value or ""))


def _transfer(value: dict) -> bytes:
    return _hex(1, value["owner_address"]) + _hex(2, value["to_address"]) + _int(3, value["amount"])


def _trigger(value: dict) -> bytes:
    return (
        _hex(1, value["owner_address"])
        + _hex(2, value["contract_address"])
        + _int(3, value.get("call_value", 0))
        + _hex(4, value.get("data"))
    )


def _create(value: dict) -> bytes:
    new = value["new_contract"]
    smart_contract = (
        _hex(1, new["origin_address"])
        + _hex(4, new["bytecode"])
        + _int(6, new.get("consume_user_resource_percent", 0))
        + _bytes(7, new.get("name", "").encode())
        + _int(8, new.get("origin_energy_limit", 0))
    )
    return _hex(1, value["owner_address"]) + _bytes(2, smart_contract)


_PARAMETERS = {"TransferContract": _transfer, "TriggerSmartContract": _trigger, "CreateSmartContract": _create}


def _contract(contract: dict) -> bytes:
    kind = contract["type"]
    parameter = _bytes(1, TYPE_URL.format(kind).encode()) + _bytes(2, _PARAMETERS[kind](contract["parameter"]["value"]))
    return _int(1, CONTRACT_TYPES[kind]) + _bytes(2, parameter)


def transaction_raw(raw_data: dict) -> bytes:
    """`raw_data` with hex addresses (the visible=false form)."""
    return (
        _hex(1, raw_data["ref_block_bytes"])
        + _hex(4, raw_data["ref_block_hash"])
        + _int(8, raw_data["expiration"])
        + _hex(10, raw_data.get("data"))
        + b"".join(_bytes(11, _contract(contract)) for contract in raw_data["contract"])
        + _int(14, raw_data.get("timestamp", 0))
        + _int(18, raw_data.get("fee_limit", 0))
    )


def header_raw(raw_data: dict) -> bytes:
    return (
        _int(1, raw_data.get("timestamp", 0))
        + _hex(2, raw_data["txTrieRoot"])
        + _hex(3, raw_data["parentHash"])
        + _int(7, raw_data.get("number", 0))
        + _hex(9, raw_data["witness_address"])
        + _int(10, raw_data.get("version", 0))
    )


def transaction_id(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def block_id(number: int, header: bytes) -> str:
    return number.to_bytes(8, "big").hex() + hashlib.sha256(header).hexdigest()[16:]
