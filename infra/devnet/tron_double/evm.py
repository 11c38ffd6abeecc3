"""The double's execution engine: a private anvil, where TRX is the native coin (1 sun = 1 wei).

Anvil runs with a zero base fee and auto-impersonation, so any Tron account
can send with gas price 0 and balances move only by what the transactions
transfer (the double charges no Tron fees). Each Tron block starts with an
`evm_snapshot`, so a reorg reverts the EVM to the first replaced block.
"""

from dataclasses import dataclass

from infra.devnet.nodes import AnvilNode, RPCError

ANVIL_ARGS = ("--base-fee", "0", "--gas-price", "0", "--auto-impersonate")
CALL_GAS = 3_000_000


@dataclass(frozen=True)
class Receipt:
    success: bool
    gas_used: int
    logs: list[dict]
    contract_address: str | None
    tx_hash: str = ""


class Evm:
    def __init__(self) -> None:
        self.node = AnvilNode(extra_args=ANVIL_ARGS)

    def start(self) -> None:
        self.node.start()

    def stop(self) -> None:
        self.node.stop()

    @property
    def dev_accounts(self) -> list[tuple[str, str]]:
        """(0x address, private key) of anvil's funded accounts."""
        return list(zip(self.node.accounts, self.node.private_keys, strict=True))

    def snapshot(self) -> str:
        return self.node.rpc("evm_snapshot")

    def revert(self, snapshot: str) -> None:
        if not self.node.rpc("evm_revert", snapshot):
            raise RuntimeError(f"anvil refused to revert to snapshot {snapshot}")

    def height(self) -> int:
        return int(self.node.rpc("eth_blockNumber"), 16)

    def balance(self, address: str, height: int | None = None) -> int:
        return int(self.node.rpc("eth_getBalance", address, _tag(height)), 16)

    def nonce(self, address: str, height: int | None = None) -> int:
        return int(self.node.rpc("eth_getTransactionCount", address, _tag(height)), 16)

    def code(self, address: str, height: int | None = None) -> str:
        return self.node.rpc("eth_getCode", address, _tag(height)).removeprefix("0x")

    def call(self, sender: str, to: str, data: str, height: int | None = None) -> tuple[bool, str]:
        """(succeeded, return or revert data as bare hex) of a call on the state at `height` (the current one)."""
        try:
            result = self.node.rpc("eth_call", {"from": sender, "to": to, "data": "0x" + data}, _tag(height))
        except RPCError as error:
            revert = error.error.get("data") if isinstance(error.error, dict) else None
            return False, (revert or "0x").removeprefix("0x")
        return True, result.removeprefix("0x")

    def send(self, sender: str, to: str | None, value: int = 0, data: str = "") -> Receipt:
        """Mine one transaction; a revert is mined too (the gas is fixed, so nothing is estimated)."""
        tx = {"from": sender, "value": hex(value), "gas": hex(CALL_GAS if data else 21_000), "gasPrice": "0x0"}
        if to is not None:
            tx["to"] = to
        if data:
            tx["data"] = "0x" + data
        receipt = self.node.wait_receipt(self.node.rpc("eth_sendTransaction", tx))
        return Receipt(
            success=receipt["status"] == "0x1",
            gas_used=int(receipt["gasUsed"], 16),
            logs=receipt["logs"],
            contract_address=receipt.get("contractAddress"),
            tx_hash=receipt["transactionHash"],
        )

    def internal_calls(self, tx_hash: str) -> list[dict]:
        """The frames under the transaction's own call (callTracer), depth-first in execution order, each with
        `reverted` when it or a frame above it failed."""
        root = self.node.rpc("debug_traceTransaction", tx_hash, {"tracer": "callTracer"})
        frames: list[dict] = []
        stack = [(child, bool(root.get("error"))) for child in reversed(root.get("calls") or ())]
        while stack:
            frame, reverted = stack.pop()
            reverted = reverted or bool(frame.get("error"))
            frames.append({**frame, "reverted": reverted})
            stack.extend((child, reverted) for child in reversed(frame.get("calls") or ()))
        return frames


def _tag(height: int | None) -> str:
    return "latest" if height is None else hex(height)
