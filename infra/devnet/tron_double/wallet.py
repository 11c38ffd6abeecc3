"""The full-node HTTP API (`/wallet/*`, `/walletsolidity/*`) over the double's chain.

Each endpoint takes the request body and a `View`: the highest block it may
show (the head for /wallet/, the solidified block for /walletsolidity/) and
the `visible` flag. Shapes follow java-tron: not found is `{}`, failures are
`{"Error": ...}`, broadcasts answer `{"result": true, "txid"}` or a `code`.
"""

from dataclasses import dataclass

from kernodeck_chains.evm import selector

from . import transactions
from .addresses import to_evm
from .chain import Block, Chain, ChainError
from .evm import Evm
from .render import from_request, shown

VALIDATE = "org.tron.core.exception.ContractValidateException"
BAD_ARGUMENT = "java.lang.IllegalArgumentException"
RUNNABLE = frozenset({"TransferContract", "TriggerSmartContract", "CreateSmartContract"})


class ApiError(Exception):
    """Answered as java-tron answers an exception: {"Error": "class <java class> : <message>"}."""

    def __init__(self, java_class: str, message: str):
        super().__init__(message)
        self.java_class = java_class
        self.message = message


@dataclass(frozen=True)
class View:
    chain: Chain
    evm: Evm
    bound: int
    visible: bool


def _number(params: dict, key: str) -> int:
    try:
        return int(params.get(key, 0))
    except (TypeError, ValueError):
        raise ApiError("java.lang.NumberFormatException", f"For input string: {params.get(key)!r}") from None


def _block(view: View, block: Block | None) -> dict:
    return shown(block.json, view.visible) if block else {}


def getnowblock(view: View, params: dict) -> dict:
    return _block(view, view.chain.block(view.bound, view.bound))


def getblock(view: View, params: dict) -> dict:
    """java-tron 4.7's /wallet/getblock: `id_or_num` (a number, a block id, or empty for the head), `detail`
    (false by default: the block without its transactions)."""
    key = str(params.get("id_or_num") or "")
    if not key:
        block = view.chain.block(view.bound, view.bound)
    elif key.isdigit():
        block = view.chain.block(int(key), view.bound)
    else:
        block = view.chain.block_by_id(key, view.bound)
    found = _block(view, block)
    return found if params.get("detail") else {k: v for k, v in found.items() if k != "transactions"}


def getblockbynum(view: View, params: dict) -> dict:
    return _block(view, view.chain.block(_number(params, "num"), view.bound))


def getblockbyid(view: View, params: dict) -> dict:
    return _block(view, view.chain.block_by_id(str(params.get("value", "")), view.bound))


def gettransactionbyid(view: View, params: dict) -> dict:
    found = view.chain.locate(str(params.get("value", "")), view.bound)
    return shown(found[0].json["transactions"][found[1]], view.visible) if found else {}


def gettransactioninfobyid(view: View, params: dict) -> dict:
    found = view.chain.locate(str(params.get("value", "")), view.bound)
    return shown(found[0].infos[found[1]], view.visible) if found else {}


def gettransactioninfobyblocknum(view: View, params: dict) -> dict | list:
    number = _number(params, "num")
    if number <= 0:
        return {}
    block = view.chain.block(number, view.bound)
    return shown(block.infos, view.visible) if block else []


def getaccount(view: View, params: dict) -> dict:
    address = from_request({"address": params.get("address")}, view.visible)["address"]
    evm_height = view.chain.blocks[view.bound].evm_height
    balance = view.evm.balance(to_evm(address), evm_height)
    if not balance and not view.evm.nonce(to_evm(address), evm_height):
        return {}  # java-tron knows no account that never received TRX
    account = {"address": address}
    if balance:
        account["balance"] = balance
    return shown(account, view.visible)


def _unsigned(view: View, tx: dict) -> dict:
    return {"visible": view.visible, **shown(tx, view.visible)}


def _check_transfer(view: View, value: dict) -> None:
    if value.get("amount", 0) <= 0:
        raise ApiError(VALIDATE, "Amount must be greater than 0.")
    if value["owner_address"] == value["to_address"]:
        raise ApiError(VALIDATE, "Cannot transfer TRX to yourself.")
    if view.evm.balance(to_evm(value["owner_address"])) < value["amount"]:
        raise ApiError(VALIDATE, "Validate TransferContract error, balance is not sufficient.")


def createtransaction(view: View, params: dict) -> dict:
    body = from_request(params, view.visible)
    value = {
        "owner_address": body.get("owner_address"),
        "to_address": body.get("to_address"),
        "amount": _number(body, "amount"),
    }
    _check_transfer(view, value)
    tip = view.chain.tip
    return _unsigned(view, transactions.build("TransferContract", value, tip.id, tip.timestamp_ms))


def _call_data(body: dict) -> str:
    if body.get("data"):
        return body["data"]
    return selector(body.get("function_selector", "")).hex() + body.get("parameter", "")


def triggersmartcontract(view: View, params: dict) -> dict:
    body = from_request(params, view.visible)
    if not view.evm.code(to_evm(body["contract_address"])):
        return {"result": {"code": "CONTRACT_VALIDATE_ERROR", "message": b"No contract or not a smart contract".hex()}}
    value = {
        "owner_address": body["owner_address"],
        "contract_address": body["contract_address"],
        "data": _call_data(body),
    }
    if body.get("call_value"):
        value["call_value"] = _number(body, "call_value")
    tip = view.chain.tip
    tx = transactions.build("TriggerSmartContract", value, tip.id, tip.timestamp_ms, _number(body, "fee_limit"))
    return {"result": {"result": True}, "transaction": _unsigned(view, tx)}


def triggerconstantcontract(view: View, params: dict) -> dict:
    """A contract call run on the view's state and not broadcast (a TRC-20's balanceOf): what it returned in
    `constant_result`, or CONTRACT_EXE_ERROR when it reverted."""
    body = from_request(params, view.visible)
    contract = to_evm(body["contract_address"])
    evm_height = view.chain.blocks[view.bound].evm_height
    if not view.evm.code(contract, evm_height):
        return {"result": {"code": "CONTRACT_VALIDATE_ERROR", "message": b"No contract or not a smart contract".hex()}}
    owner = to_evm(body["owner_address"]) if body.get("owner_address") else "0x" + "00" * 20
    succeeded, output = view.evm.call(owner, contract, _call_data(body), evm_height)
    if not succeeded:
        message = b"REVERT opcode executed".hex()
        return {"result": {"code": "CONTRACT_EXE_ERROR", "message": message}, "constant_result": [output]}
    return {"result": {"result": True}, "constant_result": [output]}


def _refusal(code: str, txid: str, message: str) -> dict:
    return {"code": code, "txid": txid, "message": message.encode().hex()}


def broadcast(view: View, tx: dict) -> dict:
    """Validate a signed transaction (hex form) and put it in the mempool, as broadcasttransaction does."""
    kind, value = transactions.contract(tx)
    if kind not in RUNNABLE:
        raise ApiError(BAD_ARGUMENT, f"the double does not run {kind}")
    try:
        signer = transactions.signer(tx)
    except ValueError as error:
        return _refusal("SIGERROR", tx["txID"], f"Validate signature error: {error}")
    if signer != value["owner_address"]:
        return _refusal(
            "SIGERROR", tx["txID"], f"Validate signature error: {signer} is not the owner of the transaction"
        )
    if kind == "TransferContract":
        try:
            _check_transfer(view, value)
        except ApiError as error:
            return _refusal("CONTRACT_VALIDATE_ERROR", tx["txID"], error.message)
    try:
        view.chain.submit(tx)
    except ChainError as error:
        return _refusal("DUP_TRANSACTION_ERROR", tx["txID"], str(error))
    return {"result": True, "txid": tx["txID"]}


def broadcasttransaction(view: View, params: dict) -> dict:
    body = from_request({k: v for k, v in params.items() if k != "visible"}, view.visible)
    return broadcast(view, transactions.identified(body))


READ = {
    "getnowblock": getnowblock,
    "getblock": getblock,
    "getblockbynum": getblockbynum,
    "getblockbyid": getblockbyid,
    "gettransactionbyid": gettransactionbyid,
    "gettransactioninfobyid": gettransactioninfobyid,
    "gettransactioninfobyblocknum": gettransactioninfobyblocknum,
    "getaccount": getaccount,
    "triggerconstantcontract": triggerconstantcontract,
}
# /wallet/ has every endpoint; /walletsolidity/ only the reads.
WALLET = {
    **READ,
    "createtransaction": createtransaction,
    "triggersmartcontract": triggersmartcontract,
    "broadcasttransaction": broadcasttransaction,
}
SOLIDITY = READ
