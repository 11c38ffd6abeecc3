"""The eight payment methods (an asset on a network), their token contracts
and the confirmations a transfer needs on each network."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from kernodeck_chains.addresses import is_valid_ethereum_address, is_valid_tron_address
from kernodeck_contracts.errors import ServiceError

TokenKind = Literal["erc20", "trc20"]


@dataclass(frozen=True, slots=True)
class Method:
    asset: str
    network: str
    decimals: int  # a whole unit is 10**decimals base units
    quote_decimals: int  # the precision a customer is asked to pay
    rate_symbol: str  # the symbol whose USD rate prices this method
    token_kind: TokenKind | None = None


METHODS: tuple[Method, ...] = (
    Method("BTC", "bitcoin", 8, 8, "BTC"),
    Method("ETH", "ethereum", 18, 6, "ETH"),
    Method("USDT", "ethereum", 6, 2, "USDT", "erc20"),
    Method("USDC", "ethereum", 6, 2, "USDC", "erc20"),
    Method("TRX", "tron", 6, 6, "TRX"),
    Method("USDT", "tron", 6, 2, "USDT", "trc20"),
    Method("SOL", "solana", 9, 6, "SOL"),
    Method("LTC", "litecoin", 8, 8, "LTC"),
)

_BY_PAIR = {(method.asset, method.network): method for method in METHODS}
# Networks whose deposit addresses derive from an account key (Solana's come from the operator's pool).
DERIVED_NETWORKS = tuple(sorted({method.network for method in METHODS} - {"solana"}))
_NETWORKS_BY_ASSET = {
    asset: tuple(method.network for method in METHODS if method.asset == asset)
    for asset in dict.fromkeys(method.asset for method in METHODS)
}


def find_method(asset: str, network: str) -> Method:
    """The method for this pair; the asset matches in any case, the network
    only in lower case. Raise ServiceError(validation_error) naming the field."""
    asset_key = asset.upper() if isinstance(asset, str) else None
    if isinstance(network, str) and (method := _BY_PAIR.get((asset_key, network))):
        return method
    accepted = _NETWORKS_BY_ASSET.get(asset_key)
    if accepted is None:
        assets = ", ".join(_NETWORKS_BY_ASSET)
        raise ServiceError.field("asset", f"{asset!r} is not an accepted asset (accepted: {assets})")
    raise ServiceError.field("network", f"{asset_key} is accepted on {' or '.join(accepted)} only, not on {network!r}")


MAINNET = "mainnet"

# Tether's USDT on Ethereum and on Tron, Circle's USDC on Ethereum.
TOKEN_CONTRACTS: dict[str, dict[tuple[str, str], str]] = {
    MAINNET: {
        ("USDT", "ethereum"): "0xdAC17F958D2ee523a2206206994597C13D831ec7",
        ("USDC", "ethereum"): "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        ("USDT", "tron"): "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t",
    },
}

_CONTRACT_VALIDATORS = {"erc20": is_valid_ethereum_address, "trc20": is_valid_tron_address}


class TokenContractError(ValueError):
    """A token contract is missing from the configuration or is malformed."""


def _same_contract(kind: TokenKind, first: str, second: str) -> bool:
    # Ethereum hex is case-insensitive (EIP-55 case is only a checksum);
    # Tron's base58 is not.
    return first.lower() == second.lower() if kind == "erc20" else first == second


def token_contract(method: Method, environment: str, overrides: Mapping[tuple[str, str], str]) -> str | None:
    """The contract whose transfers count as `method`, None for a native coin.

    Mainnet contracts are built in: an override that names another contract
    is refused, since crediting a lookalike token would credit worthless
    transfers. Test networks have no default: each token needs its override.
    """
    if method.token_kind is None:
        return None
    pair = (method.asset, method.network)
    configured = overrides.get(pair)
    known = TOKEN_CONTRACTS.get(environment, {}).get(pair)
    if known is not None:
        if configured is not None and not _same_contract(method.token_kind, configured, known):
            raise TokenContractError(
                f"the {method.asset} contract on {method.network} {environment} is {known}; "
                f"refusing the configured {configured!r}"
            )
        return known
    if configured is None:
        raise TokenContractError(
            f"no {method.asset} contract configured for {method.network} on {environment}: "
            "test networks have no default, set it explicitly"
        )
    if not _CONTRACT_VALIDATORS[method.token_kind](configured):
        raise TokenContractError(
            f"the {method.asset} contract configured for {method.network} on {environment} "
            f"is not a valid {method.network} address: {configured!r}"
        )
    return configured


DEFAULT_CONFIRMATIONS: dict[str, int] = {
    # ~20 minutes; a reorganisation deeper than one block is very rare on Bitcoin.
    "bitcoin": 2,
    # ~15 minutes of 2.5-minute blocks: less hash power than Bitcoin, so deeper.
    "litecoin": 6,
    # ~2.4 minutes of 12 s slots; reorganisations since the Merge are one or two blocks.
    "ethereum": 12,
    # A solidified block: 19 of the 27 super representatives (> 2/3) built on it.
    "tron": 19,
    # The "finalized" commitment: a supermajority rooted the block, 31+ blocks on top.
    "solana": 32,
}
