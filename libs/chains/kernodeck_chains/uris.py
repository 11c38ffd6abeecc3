"""Payment request URIs a wallet can open or scan as a QR code.

- bitcoin, litecoin: BIP21, `bitcoin:<address>?amount=<decimal BTC>`.
- ethereum: EIP-681, `ethereum:<address>[@<chain id>]?value=<wei>`, and for an
  ERC-20 token `ethereum:<contract>[@<chain id>]/transfer?address=<address>&uint256=<base units>`.
  Without a chain id a wallet uses whatever network it is on (EIP-681).
- solana: Solana Pay transfer request, `solana:<address>?amount=<decimal SOL>`.
- tron: no standard exists (TIP-17, sometimes cited for it, is the energy
  model). `tron:<address>?amount=<decimal TRX>` is the de facto form wallets
  scan, as BTCPay's USDt plugin emits it. For TRC-20 we add `token=<contract>`:
  no wallet documents that parameter, and one that ignores it may prefill a
  TRX transfer, so the page must show asset and network beside the code.
"""

from typing import Protocol
from urllib.parse import quote, urlencode

from .amounts import format_amount


class Asset(Protocol):
    """What a URI needs to know of the asset asked for (payments' Method is one)."""

    @property
    def asset(self) -> str: ...
    @property
    def network(self) -> str: ...
    @property
    def decimals(self) -> int: ...  # a whole unit is 10**decimals base units
    @property
    def token_kind(self) -> str | None: ...  # "erc20", "trc20", or None for the network's own coin


def _check_positive_int(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive int, got {value!r}")


def _eip681(address: str, base_units: int, contract: str | None, chain_id: int | None) -> str:
    chain = f"@{chain_id}" if chain_id is not None else ""
    if contract is not None:
        query = urlencode({"address": address, "uint256": base_units})
        return f"ethereum:{quote(contract, safe='')}{chain}/transfer?{query}"
    # EIP-681 also allows 2.014e18; plain digits of wei are the clearest to read and parse.
    return f"ethereum:{quote(address, safe='')}{chain}?{urlencode({'value': base_units})}"


def payment_uri(
    method: Asset,
    address: str,
    base_units: int,
    token_contract: str | None,
    chain_id: int | None = None,
) -> str:
    """The URI asking for `base_units` of `method` to `address`; `token_contract`
    is required for a token and refused for a native coin, `chain_id` applies
    to ethereum only."""
    _check_positive_int("base_units", base_units)
    if method.token_kind is not None and token_contract is None:
        raise ValueError(f"{method.asset} on {method.network} is a token: its contract is required")
    if method.token_kind is None and token_contract is not None:
        raise ValueError(f"{method.asset} on {method.network} is a native coin: it takes no token contract")
    if chain_id is not None:
        if method.network != "ethereum":
            raise ValueError(f"a chain id applies to ethereum, not {method.network}")
        _check_positive_int("chain_id", chain_id)
    if method.network == "ethereum":
        return _eip681(address, base_units, token_contract, chain_id)
    params = {"amount": format_amount(base_units, method.decimals)}
    if token_contract is not None:
        params["token"] = token_contract
    # The scheme of BIP21, Solana Pay and the Tron form is the network's name.
    return f"{method.network}:{quote(address, safe='')}?{urlencode(params)}"
