"""The TRC-20 the double deploys: the devnet's ERC-20 `TestToken` (infra/devnet/contracts/),
whose transfer returns true and reverts on a short balance, as Tron's USDT does."""

from infra.devnet.tokens import call_data, compile_contracts, encode_args


def init_code(symbol: str, decimals: int) -> str:
    """Bytecode and constructor(name, symbol, decimals) arguments, as bare hex."""
    bytecode = compile_contracts()["TestToken"]["bytecode"].removeprefix("0x")
    return bytecode + encode_args(["string", "string", "uint8"], [symbol, symbol, decimals]).hex()


def transfer_call(to_evm: str, amount: int) -> str:
    return call_data("transfer(address,uint256)", to_evm, amount).removeprefix("0x")


def mint_call(to_evm: str, amount: int) -> str:
    return call_data("mint(address,uint256)", to_evm, amount).removeprefix("0x")
