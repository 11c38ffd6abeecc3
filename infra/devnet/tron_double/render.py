"""The `visible` switch of the node API: hex addresses (41...) or base58check (T...).

java-tron decides by field name (HttpSelfFormatFieldName): the address fields
below turn into base58 when `visible` is true, `resMessage` into text, and
every other bytes field stays hex. A log's `address` is the EVM's 20 bytes;
with `visible` the node prepends 0x41 before encoding it.
"""

from .addresses import PREFIX, parse, to_base58

ADDRESS_FIELDS = frozenset(
    {
        "address",
        "owner_address",
        "to_address",
        "contract_address",
        "origin_address",
        "witness_address",
        "caller_address",
        "transferTo_address",
    }
)
TEXT_FIELDS = frozenset({"resMessage"})


def to_visible(value):
    """A copy of a response in the visible=true form."""
    if isinstance(value, list):
        return [to_visible(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key in ADDRESS_FIELDS and isinstance(item, str):
            out[key] = to_base58(item if len(item) == 42 else PREFIX + item)
        elif key in TEXT_FIELDS:
            out[key] = bytes.fromhex(item).decode(errors="replace")
        else:
            out[key] = to_visible(item)
    return out


def shown(value, visible: bool):
    return to_visible(value) if visible else value


def from_request(value, visible: bool):
    """A copy of a request body with every address field as 41-hex; ValueError on a wrong spelling."""
    if isinstance(value, list):
        return [from_request(item, visible) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: parse(item, visible) if key in ADDRESS_FIELDS and isinstance(item, str) else from_request(item, visible)
        for key, item in value.items()
    }
