"""Run one Tron transaction on the EVM and describe the result as Tron records it.

An `Outcome` holds the block's `ret` (contractRet) and the TransactionInfo
fields that do not depend on the block. A transaction that can no longer run
(a TRX balance spent by an earlier one) gives None and stays out of the block.
"""

import hashlib
from dataclasses import dataclass, field

from infra.devnet.nodes import RPCError

from . import transactions
from .addresses import from_evm, to_evm
from .evm import Evm, Receipt

REVERT_MESSAGE = b"REVERT opcode executed".hex()


@dataclass(frozen=True)
class Outcome:
    contract_ret: str
    info: dict
    created: str | None = field(default=None)  # 41-hex address of a contract the transaction deployed


def execute(evm: Evm, tx: dict) -> Outcome | None:
    kind, value = transactions.contract(tx)
    try:
        return _RUNNERS[kind](evm, tx, value)
    except RPCError:
        return None


def _transfer(evm: Evm, tx: dict, value: dict) -> Outcome:
    evm.send(to_evm(value["owner_address"]), to_evm(value["to_address"]), value=value["amount"])
    return Outcome("SUCCESS", {"contractResult": [""], "receipt": {"net_usage": transactions.size(tx)}})


def _trigger(evm: Evm, tx: dict, value: dict) -> Outcome:
    sender, target = to_evm(value["owner_address"]), to_evm(value["contract_address"])
    _, returned = evm.call(sender, target, value.get("data", ""))
    receipt = evm.send(sender, target, value=value.get("call_value", 0), data=value.get("data", ""))
    info = {"contractResult": [returned], "contract_address": value["contract_address"]}
    internal = [_internal(tx, position, frame) for position, frame in enumerate(evm.internal_calls(receipt.tx_hash))]
    if internal:
        info["internal_transactions"] = internal
    return _outcome(tx, receipt, info)


NOTES = {"CALL": "call", "CREATE": "create", "CREATE2": "create", "SELFDESTRUCT": "suicide"}


def _internal(tx: dict, position: int, frame: dict) -> dict:
    """One internal transaction as java-tron records it (vm.saveInternalTx): TRX moved in `callValueInfo`
    ([{}] when none), `rejected` only when true (protobuf's JSON leaves false out)."""
    value = int(frame.get("value") or "0x0", 16)
    internal = {
        "hash": hashlib.sha256(f"{tx['txID']}:{position}".encode()).hexdigest(),
        "caller_address": from_evm(frame["from"]),
        "transferTo_address": from_evm(frame["to"]),
        "callValueInfo": [{"callValue": value} if value else {}],
        "note": NOTES.get(frame.get("type", "CALL"), "call").encode().hex(),
    }
    if frame["reverted"]:
        internal["rejected"] = True
    return internal


def _create(evm: Evm, tx: dict, value: dict) -> Outcome:
    receipt = evm.send(to_evm(value["owner_address"]), None, data=value["new_contract"]["bytecode"])
    created = from_evm(receipt.contract_address) if receipt.success else None
    info = {"contractResult": [evm.code(receipt.contract_address) if created else ""]}
    if created:
        info["contract_address"] = created
    return _outcome(tx, receipt, info, created)


def _outcome(tx: dict, receipt: Receipt, info: dict, created: str | None = None) -> Outcome:
    result = "SUCCESS" if receipt.success else "REVERT"
    info["receipt"] = {
        "energy_usage_total": receipt.gas_used,
        "net_usage": transactions.size(tx),
        "result": result,
    }
    if receipt.logs:
        info["log"] = [_log(entry) for entry in receipt.logs]
    if not receipt.success:
        info["result"] = "FAILED"
        info["resMessage"] = REVERT_MESSAGE
    return Outcome(result, info, created)


def _log(entry: dict) -> dict:
    """An EVM log as TransactionInfo.log holds it: 20-byte address, all hex without 0x."""
    log = {
        "address": entry["address"].lower().removeprefix("0x"),
        "topics": [t.removeprefix("0x") for t in entry["topics"]],
    }
    if entry["data"] not in ("0x", ""):
        log["data"] = entry["data"].removeprefix("0x")
    return log


_RUNNERS = {"TransferContract": _transfer, "TriggerSmartContract": _trigger, "CreateSmartContract": _create}
