"""Reading JSON-RPC params as agave does, and the `{"context", "value"}` result wrapper."""

from __future__ import annotations

from typing import Any

from solders.pubkey import Pubkey
from solders.signature import Signature

from .jsonrpc import INVALID_PARAMS, RpcError
from .ledger import COMMITMENTS

API_VERSION = "2.2.0"  # what `context.apiVersion` reports


def with_context(slot: int, value: Any) -> dict:
    return {"context": {"apiVersion": API_VERSION, "slot": slot}, "value": value}


def arg(params: list, index: int, kind: type) -> Any:
    if len(params) <= index or not isinstance(params[index], kind):
        raise RpcError(INVALID_PARAMS, f"Invalid params: expected a {kind.__name__} at position {index}")
    return params[index]


def config(params: list, index: int) -> dict:
    config = params[index] if len(params) > index else None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise RpcError(INVALID_PARAMS, f"Invalid params: expected a config object at position {index}")
    return config


def encoding_config(params: list, index: int) -> dict:
    """getBlock and getTransaction also take a bare encoding string in place of the config."""
    if len(params) > index and isinstance(params[index], str):
        return {"encoding": params[index]}
    return config(params, index)


def commitment(config: dict, *, at_least_confirmed: bool = False) -> str:
    commitment = choice(config, "commitment", COMMITMENTS, "finalized")
    if at_least_confirmed and commitment == "processed":
        raise RpcError(INVALID_PARAMS, "Method does not support commitment below `confirmed`")
    return commitment


def choice(config: dict, key: str, allowed: tuple[str, ...], default: str) -> str:
    value = config.get(key, default)
    if value not in allowed:
        raise RpcError(INVALID_PARAMS, f"Invalid params: unknown {key} `{value}`, expected one of {allowed}")
    return value


def count(params: list) -> int:
    count = params[0] if params else 1
    if not isinstance(count, int) or count < 0:
        raise RpcError(INVALID_PARAMS, "Invalid params: expected a count >= 0")
    return count


def slot(value: Any) -> int:
    if not isinstance(value, int) or value < 0:
        raise RpcError(INVALID_PARAMS, "Invalid params: a slot is an integer >= 0")
    return value


def pubkey(text: str) -> str:
    try:
        return str(Pubkey.from_string(text))
    except ValueError:
        raise RpcError(INVALID_PARAMS, "Invalid param: Invalid") from None


def signature(text: Any) -> str:
    try:
        return str(Signature.from_string(text))
    except (TypeError, ValueError):
        raise RpcError(INVALID_PARAMS, "Invalid param: Invalid") from None
