"""The JSON shapes of blocks and transactions, field for field as agave's RPC encodes them
(solana-transaction-status: UiConfirmedBlock, EncodedTransactionWithStatusMeta, UiTransactionStatusMeta)."""

from __future__ import annotations

import base64
from typing import Any

from solders.instruction import CompiledInstruction
from solders.message import MessageV0
from solders.signature import Signature

from .base58 import b58encode
from .jsonrpc import INVALID_PARAMS, RpcError
from .ledger import Block
from .runtime import Executed

UNSUPPORTED_TRANSACTION_VERSION = -32015
ENCODINGS = ("json", "base64", "base58")
TRANSACTION_DETAILS = ("full", "accounts", "signatures", "none")


def block_json(block: Block, encoding: str, details: str, rewards: bool, max_version: int | None) -> dict:
    result: dict[str, Any] = {
        "blockHeight": block.block_height,
        "blockTime": block.block_time,
        "blockhash": block.blockhash,
        "parentSlot": block.parent_slot,
        "previousBlockhash": block.previous_blockhash,
    }
    if details == "full":
        result["transactions"] = [transaction_with_meta(e, encoding, max_version) for e in block.txs]
    elif details == "accounts":
        result["transactions"] = [transaction_accounts(e, max_version, rewards) for e in block.txs]
    elif details == "signatures":
        result["signatures"] = [e.signature for e in block.txs]
    if block.traffic is not None:
        _add_traffic(result, block, encoding, details, rewards, max_version)
    if rewards:
        result["rewards"] = []  # the double pays no block rewards
    return result


def _add_traffic(
    result: dict, block: Block, encoding: str, details: str, rewards: bool, max_version: int | None
) -> None:
    """The rest of the cluster's transactions (traffic.py), after the double's own."""
    traffic = block.traffic
    if details == "signatures":
        result["signatures"] += [str(Signature.from_bytes(s)) for s in traffic.signatures(block.slot)]
    if details not in ("full", "accounts"):
        return
    if encoding != "json":
        raise RpcError(INVALID_PARAMS, "Invalid params: the double serves its mainnet traffic in `json` encoding only")
    if max_version is None:  # its swaps are version 0 transactions
        raise RpcError(UNSUPPORTED_TRANSACTION_VERSION, _version_message(0))
    items = traffic.transactions(block.slot, block.previous_blockhash, details, max_version)
    if rewards:
        for item in items:
            item["meta"]["rewards"] = []
    result["transactions"] += items


def confirmed_transaction(block: Block, e: Executed, encoding: str, max_version: int | None) -> dict:
    """`getTransaction`'s result."""
    return {"slot": block.slot, "blockTime": block.block_time, **transaction_with_meta(e, encoding, max_version)}


def transaction_with_meta(e: Executed, encoding: str, max_version: int | None) -> dict:
    version = 0 if isinstance(e.tx.message, MessageV0) else "legacy"
    if version != "legacy" and (max_version is None or version > max_version):
        raise RpcError(UNSUPPORTED_TRANSACTION_VERSION, _version_message(version))
    item = {"transaction": _transaction(e, encoding), "meta": _meta(e)}
    if max_version is not None:
        item["version"] = version
    return item


def transaction_accounts(e: Executed, max_version: int | None, rewards: bool) -> dict:
    """`transactionDetails: "accounts"`: the signatures and every account with its flags and source (the
    message's keys, then those loaded from lookup tables), and the meta's balances only (agave's
    build_simple_ui_transaction_status_meta): what a watcher needs, a fraction of the full block."""
    version = 0 if isinstance(e.tx.message, MessageV0) else "legacy"
    if version != "legacy" and (max_version is None or version > max_version):
        transaction_with_meta(e, "json", max_version)  # the same refusal as the full details
    message = e.tx.message
    header = message.header
    keys = [str(k) for k in message.account_keys]
    signers, unsigned_writable_end = header.num_required_signatures, len(keys) - header.num_readonly_unsigned_accounts
    accounts = [
        {
            "pubkey": key,
            "signer": index < signers,
            "source": "transaction",
            "writable": index < signers - header.num_readonly_signed_accounts
            or signers <= index < unsigned_writable_end,
        }
        for index, key in enumerate(keys)
    ]
    accounts += [{"pubkey": k, "signer": False, "source": "lookupTable", "writable": True} for k in e.loaded_writable]
    accounts += [{"pubkey": k, "signer": False, "source": "lookupTable", "writable": False} for k in e.loaded_readonly]
    meta: dict[str, Any] = {
        "err": e.err,
        "fee": e.meta.fee(),
        "postBalances": e.post_balances,
        "postTokenBalances": e.post_token_balances,
        "preBalances": e.pre_balances,
        "preTokenBalances": e.pre_token_balances,
        "status": {"Ok": None} if e.err is None else {"Err": e.err},
    }
    if rewards:
        meta["rewards"] = []
    item = {"transaction": {"accountKeys": accounts, "signatures": [str(s) for s in e.tx.signatures]}, "meta": meta}
    if max_version is not None:
        item["version"] = version
    return item


def _version_message(version: int) -> str:
    return (
        f"Transaction version ({version}) is not supported by the requesting client. Please try the request "
        f'again with the following configuration parameter: "maxSupportedTransactionVersion": {version}'
    )


def _transaction(e: Executed, encoding: str) -> Any:
    if encoding == "base64":
        return [base64.b64encode(bytes(e.tx)).decode(), "base64"]
    if encoding == "base58":
        return [b58encode(bytes(e.tx)), "base58"]
    message = e.tx.message
    header = message.header
    ui_message: dict[str, Any] = {
        "accountKeys": [str(k) for k in message.account_keys],
        "header": {
            "numReadonlySignedAccounts": header.num_readonly_signed_accounts,
            "numReadonlyUnsignedAccounts": header.num_readonly_unsigned_accounts,
            "numRequiredSignatures": header.num_required_signatures,
        },
        "instructions": [_instruction(ix, None) for ix in message.instructions],
        "recentBlockhash": str(message.recent_blockhash),
    }
    if isinstance(message, MessageV0):
        ui_message["addressTableLookups"] = [
            {
                "accountKey": str(lookup.account_key),
                "readonlyIndexes": list(lookup.readonly_indexes),
                "writableIndexes": list(lookup.writable_indexes),
            }
            for lookup in message.address_table_lookups
        ]
    return {"message": ui_message, "signatures": [str(s) for s in e.tx.signatures]}


def _meta(e: Executed) -> dict:
    meta: dict[str, Any] = {
        "computeUnitsConsumed": e.meta.compute_units_consumed(),
        "err": e.err,
        "fee": e.meta.fee(),
        "innerInstructions": [
            {
                "index": index,
                "instructions": [_instruction(inner.instruction(), inner.stack_height()) for inner in inners],
            }
            for index, inners in enumerate(e.meta.inner_instructions())
            if inners
        ],
        "loadedAddresses": {"readonly": e.loaded_readonly, "writable": e.loaded_writable},
        "logMessages": e.meta.logs(),
        "postBalances": e.post_balances,
        "postTokenBalances": e.post_token_balances,
        "preBalances": e.pre_balances,
        "preTokenBalances": e.pre_token_balances,
        "rewards": [],
        "status": {"Ok": None} if e.err is None else {"Err": e.err},
    }
    return_data = e.meta.return_data()
    if return_data.data:
        meta["returnData"] = {
            "programId": str(return_data.program_id),
            "data": [base64.b64encode(return_data.data).decode(), "base64"],
        }
    return meta


def _instruction(ix: CompiledInstruction, stack_height: int | None) -> dict:
    return {
        "accounts": list(ix.accounts),
        "data": b58encode(bytes(ix.data)),
        "programIdIndex": ix.program_id_index,
        "stackHeight": stack_height,
    }
