"""ERC-20 tokens and ETH-forwarding contracts on an anvil devnet, through JSON-RPC only.

The Solidity sources in ``contracts/`` are compiled with the project's solcjs
(``infra/devnet/install.sh solc``) once per process, about a second. Calls are
ABI-encoded here by hand and sent with ``eth_sendTransaction`` from anvil's
unlocked dev accounts (the first one unless ``sender`` is given)::

    with AnvilNode() as anvil:
        tokens = deploy_tokens(anvil)  # {"USDT": "0x...", "USDC": "0x...", "FAKE_USDT": "0x..."}
        anvil.wait_receipt(transfer_token(anvil, tokens["USDT"], "0xabc...", 25_000_000))  # 25 USDT
        forwarder = deploy(anvil, "Forwarder")
        anvil.wait_receipt(forward_eth(anvil, forwarder, "0xabc...", 10**16))  # an internal transfer
"""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path

from infra.devnet.nodes import AnvilNode, NodeError, find_binary
from kernodeck_chains.evm import selector

CONTRACTS_DIR = Path(__file__).resolve().parent / "contracts"
MINTED = 10**15  # base units minted to the deployer of each token: 1e9 tokens at 6 decimals

# (contract, name, symbol): USDT mirrors mainnet's (no bool returned); FAKE_USDT
# borrows USDT's name and symbol at another address.
TOKENS = {
    "USDT": ("TetherLike", "Tether USD", "USDT"),
    "USDC": ("TestToken", "USD Coin", "USDC"),
    "FAKE_USDT": ("TestToken", "Tether USD", "USDT"),
}


@functools.cache
def compile_contracts() -> dict[str, dict]:
    """contract name -> {"abi": [...], "bytecode": "0x..."} for every contract in contracts/."""
    solcjs = find_binary("solcjs")
    if solcjs is None:
        raise NodeError("solcjs is not installed: run infra/devnet/install.sh solc")
    request = {
        "language": "Solidity",
        "sources": {p.name: {"content": p.read_text()} for p in sorted(CONTRACTS_DIR.glob("*.sol"))},
        "settings": {"outputSelection": {"*": {"*": ["abi", "evm.bytecode.object"]}}},
    }
    out = subprocess.run(
        [str(solcjs), "--standard-json"], input=json.dumps(request), capture_output=True, text=True, timeout=120
    )
    if out.returncode != 0 or "{" not in out.stdout:
        raise NodeError(f"solcjs failed: {out.stderr[-2000:]}")
    result = json.loads(out.stdout[out.stdout.index("{") :])  # solcjs may print a notice line first
    errors = [e["formattedMessage"] for e in result.get("errors", []) if e["severity"] == "error"]
    if errors:
        raise NodeError("solcjs: " + "\n".join(errors))
    return {
        name: {"abi": c["abi"], "bytecode": "0x" + c["evm"]["bytecode"]["object"]}
        for contracts in result["contracts"].values()
        for name, c in contracts.items()
        if c["evm"]["bytecode"]["object"]  # abstract contracts and interfaces have no code
    }


def _word(n: int) -> bytes:
    return n.to_bytes(32, "big")


def _static(kind: str, value) -> bytes:
    if kind == "address":
        return bytes(12) + bytes.fromhex(value.removeprefix("0x"))
    return _word(int(value))  # uintN, bool


def _dynamic(kind: str, value) -> bytes:
    if kind == "string":
        data = value.encode()
        return _word(len(data)) + data.ljust(-(-len(data) // 32) * 32, b"\0")
    return _word(len(value)) + b"".join(_static(kind[:-2], v) for v in value)  # T[] of a static T


def encode_args(kinds: list[str], values: list) -> bytes:
    """ABI encoding of arguments of the types address, uintN, bool, string and T[] (T static)."""
    heads, tails = [], []
    offset = 32 * len(kinds)
    for kind, value in zip(kinds, values, strict=True):
        if kind == "string" or kind.endswith("[]"):
            tail = _dynamic(kind, value)
            heads.append(_word(offset))
            tails.append(tail)
            offset += len(tail)
        else:
            heads.append(_static(kind, value))
    return b"".join(heads + tails)


def call_data(signature: str, *args) -> str:
    """Calldata for ``signature`` with ``args``."""
    kinds = signature[signature.index("(") + 1 : -1]
    return "0x" + (selector(signature) + encode_args(kinds.split(",") if kinds else [], args)).hex()


def send(anvil: AnvilNode, tx: dict, sender: str | None = None, gas: int | None = None) -> str:
    """eth_sendTransaction from a dev account; returns the tx hash. An explicit ``gas``
    skips gas estimation, so that a transaction that reverts is still mined."""
    tx = {"from": sender or anvil.accounts[0], **tx}
    if gas is not None:
        tx["gas"] = hex(gas)
    return anvil.rpc("eth_sendTransaction", tx)


def send_call(
    anvil: AnvilNode, to: str, signature: str, *args, value: int = 0, sender: str | None = None, gas: int | None = None
) -> str:
    return send(anvil, {"to": to, "data": call_data(signature, *args), "value": hex(value)}, sender, gas)


def deploy(anvil: AnvilNode, contract: str, *args) -> str:
    """Deploy a contract of contracts/ with its constructor ``args``; waits for it and returns its address."""
    compiled = compile_contracts()[contract]
    constructor = next((e for e in compiled["abi"] if e["type"] == "constructor"), {"inputs": []})
    kinds = [i["type"] for i in constructor["inputs"]]
    receipt = anvil.wait_receipt(send(anvil, {"data": compiled["bytecode"] + encode_args(kinds, list(args)).hex()}))
    if receipt["status"] != "0x1":
        raise NodeError(f"deploying {contract} failed: {receipt}")
    return receipt["contractAddress"]


def deploy_tokens(anvil: AnvilNode) -> dict[str, str]:
    """USDT, USDC and FAKE_USDT (6 decimals each), MINTED units of each to the first dev account."""
    addresses = {key: deploy(anvil, contract, name, symbol, 6) for key, (contract, name, symbol) in TOKENS.items()}
    for address in addresses.values():
        anvil.wait_receipt(send_call(anvil, address, "mint(address,uint256)", anvil.accounts[0], MINTED))
    return addresses


def transfer_token(
    anvil: AnvilNode, token: str, to: str, amount: int, *, sender: str | None = None, gas: int | None = None
) -> str:
    """``token.transfer(to, amount)``; returns the tx hash without waiting for it to be mined."""
    return send_call(anvil, token, "transfer(address,uint256)", to, amount, sender=sender, gas=gas)


def forward_eth(
    anvil: AnvilNode, forwarder: str, to: str, wei: int, *, then_revert: bool = False, gas: int | None = None
) -> str:
    """Pay ``wei`` to a Forwarder that sends it on to ``to`` in an internal call; returns the tx hash.
    ``then_revert`` reverts the transaction after the inner transfer (give ``gas``: it cannot be estimated)."""
    signature = "forwardThenRevert(address)" if then_revert else "forward(address)"
    return send_call(anvil, forwarder, signature, to, value=wei, gas=gas)
