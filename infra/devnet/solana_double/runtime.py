"""Running one transaction on LiteSVM and recording what a validator records about it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from solders.address_lookup_table_account import AddressLookupTable
from solders.litesvm import LiteSVM
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata, TransactionMetadata

from .token_balances import token_balances


@dataclass(frozen=True)
class Executed:
    """A committed transaction with what the runtime recorded about it."""

    tx: VersionedTransaction
    account_keys: list[str]  # static keys, then loaded writable, then loaded readonly
    loaded_writable: list[str]
    loaded_readonly: list[str]
    pre_balances: list[int]
    post_balances: list[int]
    pre_token_balances: list[dict]
    post_token_balances: list[dict]
    err: Any  # the TransactionError as JSON, None on success
    meta: TransactionMetadata

    @property
    def signature(self) -> str:
        return str(self.tx.signatures[0])


@dataclass(frozen=True)
class Failure:
    """Why a simulated transaction would fail: the TransactionError as JSON, and the program logs."""

    err: Any
    logs: list[str]
    units_consumed: int


def execute(svm: LiteSVM, tx: VersionedTransaction) -> Executed | None:
    """Run `tx`; None when the runtime does not commit it (already processed, no funds for the fee,
    a bad signature...): such a transaction is in no block. A failed instruction is committed."""
    if svm.get_transaction(tx.signatures[0]) is not None:
        return None
    writable, readonly = _loaded_addresses(svm, tx)
    keys = [str(k) for k in tx.message.account_keys] + writable + readonly
    pubkeys = [Pubkey.from_string(k) for k in keys]
    pre = [svm.get_balance(k) or 0 for k in pubkeys]
    pre_tokens = token_balances(svm, pubkeys)
    result = svm.send_transaction(tx)
    if svm.get_transaction(tx.signatures[0]) is None:
        return None
    failed = isinstance(result, FailedTransactionMetadata)
    return Executed(
        tx=tx,
        account_keys=keys,
        loaded_writable=writable,
        loaded_readonly=readonly,
        pre_balances=pre,
        post_balances=[svm.get_balance(k) or 0 for k in pubkeys],
        pre_token_balances=pre_tokens,
        post_token_balances=token_balances(svm, pubkeys),
        err=_error_json(result) if failed else None,
        meta=result.meta() if failed else result,
    )


def simulate(svm: LiteSVM, tx: VersionedTransaction) -> Failure | None:
    result = svm.simulate_transaction(tx)
    if isinstance(result, FailedTransactionMetadata):
        return Failure(_error_json(result), result.meta().logs(), result.meta().compute_units_consumed())
    return None


def _loaded_addresses(svm: LiteSVM, tx: VersionedTransaction) -> tuple[list[str], list[str]]:
    """The addresses a v0 message loads from lookup tables, as the runtime resolves them."""
    writable: list[str] = []
    readonly: list[str] = []
    if isinstance(tx.message, MessageV0):
        for lookup in tx.message.address_table_lookups:
            account = svm.get_account(lookup.account_key)
            addresses = AddressLookupTable.deserialize(account.data).addresses if account else []
            writable += [str(addresses[i]) for i in lookup.writable_indexes if i < len(addresses)]
            readonly += [str(addresses[i]) for i in lookup.readonly_indexes if i < len(addresses)]
    return writable, readonly


def _error_json(result: FailedTransactionMetadata) -> Any:
    return json.loads(result.to_json())["err"]
