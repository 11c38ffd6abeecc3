"""Test-only endpoints under /double/, apart from the node API: blocks, reorgs, and transfers
signed with the funded dev accounts' keys (they then go through broadcasttransaction's checks)."""

from . import token, transactions, wallet
from .addresses import to_base58, to_evm, to_hex
from .chain import Chain, ChainError
from .evm import Evm

FEE_LIMIT_SUN = 100_000_000


class Control:
    def __init__(self, chain: Chain, evm: Evm, keys: dict[str, str]):
        """keys: 41-hex address -> private key of the accounts the double may sign for."""
        self.chain = chain
        self.evm = evm
        self.keys = keys

    def mine(self, params: dict) -> dict:
        ids = self.chain.mine(int(params.get("blocks", 1)))
        return {"blockIDs": ids, "height": self.chain.tip.number}

    def reorg(self, params: dict) -> dict:
        orphaned, ids = self.chain.reorg(int(params["depth"]), set(params.get("drop", [])))
        return {"orphaned": orphaned, "blockIDs": ids}

    def transfer(self, params: dict) -> dict:
        """{"to", "amount" (sun), "from"?} -> broadcasttransaction's answer."""
        value = {
            "owner_address": self._sender(params),
            "to_address": to_hex(params["to"]),
            "amount": int(params["amount"]),
        }
        return self._broadcast("TransferContract", value)

    def trc20_transfer(self, params: dict) -> dict:
        """{"contract", "to", "amount" (token units), "from"?} -> broadcasttransaction's answer."""
        call = token.transfer_call(to_evm(params["to"]), int(params["amount"]))
        return self._call(self._sender(params), to_hex(params["contract"]), call)

    def deploy_trc20(self, params: dict) -> dict:
        """{"symbol", "decimals", "supply", "from"?}: deploy, mint the supply to "from", two blocks.

        Answers {"contract_address", "blockIDs"}, or the refused broadcast.
        """
        owner = self._sender(params)
        code = token.init_code(params["symbol"], int(params["decimals"]))
        deployed = self._deploy(owner, code, params["symbol"])
        if "contract_address" not in deployed:
            return deployed
        mint = token.mint_call(to_evm(owner), int(params["supply"]))
        answer = self._call(owner, to_hex(deployed["contract_address"]), mint)
        if not answer.get("result"):
            return answer
        return {**deployed, "blockIDs": deployed["blockIDs"] + self.chain.mine(1)}

    def deploy(self, params: dict) -> dict:
        """{"bytecode" (hex init code with its constructor arguments), "name", "from"?}: deploy, one block.
        Answers {"contract_address", "blockIDs"}, or the refused broadcast."""
        return self._deploy(self._sender(params), params["bytecode"].removeprefix("0x"), params.get("name", "contract"))

    def call(self, params: dict) -> dict:
        """{"contract", "data" (hex calldata), "call_value"? (sun), "from"?} -> broadcasttransaction's answer."""
        value = {
            "owner_address": self._sender(params),
            "contract_address": to_hex(params["contract"]),
            "data": params["data"].removeprefix("0x"),
        }
        if params.get("call_value"):
            value["call_value"] = int(params["call_value"])
        return self._broadcast("TriggerSmartContract", value, FEE_LIMIT_SUN)

    def _deploy(self, owner: str, code: str, name: str) -> dict:
        """Deploy `code` (hex init code) from `owner` in a block of its own: {"contract_address", "blockIDs"}, or
        the refused broadcast."""
        new_contract = {"origin_address": owner, "bytecode": code, "name": name, "consume_user_resource_percent": 100}
        answer = self._broadcast(
            "CreateSmartContract", {"owner_address": owner, "new_contract": new_contract}, FEE_LIMIT_SUN
        )
        if not answer.get("result"):
            return answer
        block_ids = self.chain.mine(1)
        block, position = self.chain.locate(answer["txid"], self.chain.tip.number)
        contract = block.infos[position].get("contract_address")
        if contract is None:
            raise ChainError(f"the deployment of {name} failed")
        return {"contract_address": to_base58(contract), "blockIDs": block_ids}

    def _sender(self, params: dict) -> str:
        sender = to_hex(params["from"]) if params.get("from") else next(iter(self.keys))
        if sender not in self.keys:
            raise ChainError(f"no key for {params['from']}: sign the transaction and use /wallet/broadcasttransaction")
        return sender

    def _call(self, owner: str, contract: str, data: str) -> dict:
        value = {"owner_address": owner, "contract_address": contract, "data": data}
        return self._broadcast("TriggerSmartContract", value, FEE_LIMIT_SUN)

    def _broadcast(self, kind: str, value: dict, fee_limit: int = 0) -> dict:
        tip = self.chain.tip
        tx = transactions.build(kind, value, tip.id, tip.timestamp_ms, fee_limit)
        signed = transactions.sign(tx, self.keys[value["owner_address"]])
        return wallet.broadcast(wallet.View(self.chain, self.evm, tip.number, visible=False), signed)

    def endpoints(self) -> dict:
        return {
            "mine": self.mine,
            "reorg": self.reorg,
            "transfer": self.transfer,
            "trc20_transfer": self.trc20_transfer,
            "deploy_trc20": self.deploy_trc20,
            "deploy": self.deploy,
            "call": self.call,
        }
