"""Sending and finding transactions: sendTransaction (with agave's preflight), requestAirdrop,
getSignatureStatuses, getTransaction, getSignaturesForAddress."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from . import params as read
from .base58 import b58decode
from .encoding import ENCODINGS, confirmed_transaction
from .jsonrpc import INVALID_PARAMS, RpcError
from .ledger import Block, Ledger
from .params import with_context
from .runtime import Executed, Failure

MAX_SIGNATURES = 1000  # agave's MAX_GET_CONFIRMED_SIGNATURES_FOR_ADDRESS2_LIMIT
MAX_STATUSES = 256  # agave's MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS
# agave's custom server errors (rpc-client-api custom_error.rs)
SEND_TRANSACTION_PREFLIGHT_FAILURE = -32002
TRANSACTION_SIGNATURE_VERIFICATION_FAILURE = -32003


def sendTransaction(ledger: Ledger, params: list) -> str:
    config = read.config(params, 1)
    tx = _decode_transaction(read.arg(params, 0, str), read.choice(config, "encoding", ("base58", "base64"), "base58"))
    if not config.get("skipPreflight", False):
        if not all(tx.verify_with_results()):
            raise RpcError(TRANSACTION_SIGNATURE_VERIFICATION_FAILURE, "Transaction signature verification failure")
        failure = ledger.simulate(tx)
        if failure is not None:
            raise _preflight_failure(failure)
    return ledger.submit(tx)


def requestAirdrop(ledger: Ledger, params: list) -> str:
    to = Pubkey.from_string(read.pubkey(read.arg(params, 0, str)))
    return ledger.submit(ledger.airdrop_tx(to, read.arg(params, 1, int)))


def getSignatureStatuses(ledger: Ledger, params: list) -> dict:
    signatures = read.arg(params, 0, list)
    if len(signatures) > MAX_STATUSES:
        raise RpcError(INVALID_PARAMS, f"Too many inputs provided; max {MAX_STATUSES}")
    newest = ledger.block_at("processed")
    statuses = []
    for signature in signatures:
        found = ledger.transaction(read.signature(signature), newest.slot)
        if found is None:
            statuses.append(None)
            continue
        block, e = found
        level = ledger.status_of(block.slot)
        statuses.append(
            {
                "confirmationStatus": level,
                "confirmations": None if level == "finalized" else newest.block_height - block.block_height,
                "err": e.err,
                "slot": block.slot,
                "status": {"Ok": None} if e.err is None else {"Err": e.err},
            }
        )
    return with_context(newest.slot, statuses)


def getTransaction(ledger: Ledger, params: list) -> dict | None:
    signature = read.signature(read.arg(params, 0, str))
    config = read.encoding_config(params, 1)
    commitment = read.commitment(config, at_least_confirmed=True)
    encoding = read.choice(config, "encoding", ENCODINGS, "json")
    found = ledger.transaction(signature, ledger.slot_at(commitment))
    if found is None:
        return None
    return confirmed_transaction(*found, encoding, config.get("maxSupportedTransactionVersion"))


def getSignaturesForAddress(ledger: Ledger, params: list) -> list[dict]:
    address = read.pubkey(read.arg(params, 0, str))
    config = read.config(params, 1)
    newest = ledger.slot_at(read.commitment(config, at_least_confirmed=True))
    limit = config.get("limit", MAX_SIGNATURES)
    if not isinstance(limit, int) or not 1 <= limit <= MAX_SIGNATURES:
        raise RpcError(INVALID_PARAMS, f"Invalid limit; max {MAX_SIGNATURES}")
    found = ledger.signatures_for(address, newest)
    if config.get("before") is not None:
        at = _position(found, read.signature(config["before"]))
        found = [] if at is None else found[at + 1 :]
    if config.get("until") is not None:
        at = _position(found, read.signature(config["until"]))
        found = found if at is None else found[:at]
    return [_signature_info(ledger, block, e) for block, e in found[:limit]]


def _decode_transaction(data: str, encoding: str) -> VersionedTransaction:
    try:
        raw = base64.b64decode(data, validate=True) if encoding == "base64" else b58decode(data)
    except (binascii.Error, ValueError) as e:
        raise RpcError(INVALID_PARAMS, f"invalid {encoding} encoding: {e}") from None
    try:
        return VersionedTransaction.from_bytes(raw)
    except ValueError as e:
        raise RpcError(INVALID_PARAMS, f"invalid transaction: {e}") from None


def _preflight_failure(failure: Failure) -> RpcError:
    return RpcError(
        SEND_TRANSACTION_PREFLIGHT_FAILURE,
        f"Transaction simulation failed: {_describe(failure.err)}",
        {
            "accounts": None,
            "err": failure.err,
            "innerInstructions": None,
            "logs": failure.logs,
            "replacementBlockhash": None,
            "returnData": None,
            "unitsConsumed": failure.units_consumed,
        },
    )


def _describe(err: Any) -> str:
    """The TransactionError's Display text in agave, for the errors a transfer meets."""
    if err == "BlockhashNotFound":
        return "Blockhash not found"
    if err == "AccountNotFound":
        return "Attempt to debit an account but found no record of a prior credit."
    if isinstance(err, dict) and "InstructionError" in err:
        index, cause = err["InstructionError"]
        if isinstance(cause, dict) and "Custom" in cause:
            return f"Error processing Instruction {index}: custom program error: {cause['Custom']:#x}"
    return json.dumps(err)


def _position(found: list[tuple[Block, Executed]], signature: str) -> int | None:
    return next((i for i, (_, e) in enumerate(found) if e.signature == signature), None)


def _signature_info(ledger: Ledger, block: Block, e: Executed) -> dict:
    return {
        "blockTime": block.block_time,
        "confirmationStatus": ledger.status_of(block.slot),
        "err": e.err,
        "memo": None,
        "signature": e.signature,
        "slot": block.slot,
    }


METHODS = {
    f.__name__: f
    for f in (sendTransaction, requestAirdrop, getSignatureStatuses, getTransaction, getSignaturesForAddress)
}
