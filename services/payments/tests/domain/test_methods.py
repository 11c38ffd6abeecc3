import dataclasses

import pytest

from kernodeck_chains.addresses import eip55_checksum, tron_hex_address
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_payments.domain.methods import (
    DEFAULT_CONFIRMATIONS,
    METHODS,
    TOKEN_CONTRACTS,
    TokenContractError,
    find_method,
    token_contract,
)

pytestmark = pytest.mark.unit

USDT_ETH = find_method("USDT", "ethereum")
USDC_ETH = find_method("USDC", "ethereum")
USDT_TRON = find_method("USDT", "tron")
TETHER_ETH = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
CIRCLE_USDC_ETH = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
TETHER_TRON = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
# The first contract anvil's default account deploys, and USDT on Tron's Nile testnet.
DEVNET_TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
NILE_USDT = "TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj"


def test_the_eight_methods_in_order():
    assert [dataclasses.astuple(method) for method in METHODS] == [
        ("BTC", "bitcoin", 8, 8, "BTC", None),
        ("ETH", "ethereum", 18, 6, "ETH", None),
        ("USDT", "ethereum", 6, 2, "USDT", "erc20"),
        ("USDC", "ethereum", 6, 2, "USDC", "erc20"),
        ("TRX", "tron", 6, 6, "TRX", None),
        ("USDT", "tron", 6, 2, "USDT", "trc20"),
        ("SOL", "solana", 9, 6, "SOL", None),
        ("LTC", "litecoin", 8, 8, "LTC", None),
    ]


def test_a_method_is_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        METHODS[0].decimals = 2


@pytest.mark.parametrize("method", METHODS, ids=lambda method: f"{method.asset}-{method.network}")
def test_find_method_returns_each_method(method):
    assert find_method(method.asset, method.network) is method
    assert find_method(method.asset.lower(), method.network) is method


def test_asset_matches_in_any_case():
    assert find_method("uSdT", "tron") is USDT_TRON


def _refusal(asset, network) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        find_method(asset, network)
    error = caught.value
    assert error.code is ErrorCode.VALIDATION_ERROR
    assert len(error.errors) == 1
    assert error.errors[0]["message"] == error.detail
    return error


@pytest.mark.parametrize(
    ("asset", "network", "accepted_on"),
    [
        ("USDC", "tron", "USDC is accepted on ethereum only"),
        ("USDT", "solana", "USDT is accepted on ethereum or tron only"),
        ("BTC", "ethereum", "BTC is accepted on bitcoin only"),
        ("ETH", "tron", "ETH is accepted on ethereum only"),
        ("usdc", "tron", "USDC is accepted on ethereum only"),
        ("BTC", "", "BTC is accepted on bitcoin only"),
        ("SOL", "Solana", "SOL is accepted on solana only"),
        ("LTC", None, "LTC is accepted on litecoin only"),
    ],
)
def test_known_asset_on_another_network_is_refused_on_network(asset, network, accepted_on):
    error = _refusal(asset, network)
    assert error.errors[0]["field"] == "network"
    assert error.detail.startswith(accepted_on)
    assert repr(network) in error.detail


@pytest.mark.parametrize(
    ("asset", "network"),
    [("DOGE", "dogecoin"), ("", ""), ("", "bitcoin"), ("BTC ", "bitcoin"), (None, "bitcoin"), ("XMR", "ethereum")],
)
def test_unknown_asset_is_refused_on_asset(asset, network):
    error = _refusal(asset, network)
    assert error.errors[0]["field"] == "asset"
    assert "accepted: BTC, ETH, USDT, USDC, TRX, SOL, LTC" in error.detail


def test_quote_precision_never_exceeds_the_base_unit():
    assert all(0 < method.quote_decimals <= method.decimals for method in METHODS)


# --- token contracts --------------------------------------------------------


def test_mainnet_ethereum_contracts_carry_a_valid_eip55_checksum():
    for pair in [("USDT", "ethereum"), ("USDC", "ethereum")]:
        address = TOKEN_CONTRACTS["mainnet"][pair]
        assert eip55_checksum(bytes.fromhex(address[2:])) == address


def test_mainnet_tron_contract_is_tethers():
    # Tronscan shows Tether's TRC-20 contract as 41a614f8...d13c.
    assert (
        tron_hex_address(TOKEN_CONTRACTS["mainnet"][("USDT", "tron")]) == "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"
    )


def test_mainnet_contracts_are_the_token_methods():
    assert set(TOKEN_CONTRACTS["mainnet"]) == {(m.asset, m.network) for m in METHODS if m.token_kind}


@pytest.mark.parametrize("method", [m for m in METHODS if m.token_kind is None], ids=lambda m: m.asset)
def test_native_coins_have_no_contract(method):
    assert token_contract(method, "mainnet", {}) is None
    assert token_contract(method, "regtest", {}) is None


def test_mainnet_uses_the_built_in_contracts():
    assert token_contract(USDT_ETH, "mainnet", {}) == TETHER_ETH
    assert token_contract(USDC_ETH, "mainnet", {}) == CIRCLE_USDC_ETH
    assert token_contract(USDT_TRON, "mainnet", {}) == TETHER_TRON


def test_mainnet_accepts_an_override_naming_the_same_contract():
    overrides = {("USDT", "ethereum"): TETHER_ETH.lower(), ("USDT", "tron"): TETHER_TRON}
    assert token_contract(USDT_ETH, "mainnet", overrides) == TETHER_ETH
    assert token_contract(USDT_TRON, "mainnet", overrides) == TETHER_TRON


@pytest.mark.parametrize(
    ("method", "override"),
    [(USDT_ETH, DEVNET_TOKEN), (USDT_TRON, NILE_USDT), (USDT_TRON, TETHER_TRON.lower())],
)
def test_mainnet_refuses_an_override_naming_another_contract(method, override):
    with pytest.raises(TokenContractError, match="refusing"):
        token_contract(method, "mainnet", {(method.asset, method.network): override})


@pytest.mark.parametrize("environment", ["testnet", "regtest"])
def test_test_networks_have_no_default_contract(environment):
    with pytest.raises(TokenContractError, match=f"no USDT contract configured for tron on {environment}"):
        token_contract(USDT_TRON, environment, {("USDT", "ethereum"): DEVNET_TOKEN})


def test_test_networks_use_the_override():
    overrides = {("USDT", "ethereum"): DEVNET_TOKEN, ("USDT", "tron"): NILE_USDT}
    assert token_contract(USDT_ETH, "regtest", overrides) == DEVNET_TOKEN
    assert token_contract(USDT_TRON, "testnet", overrides) == NILE_USDT


@pytest.mark.parametrize(
    ("method", "override"),
    [
        (USDT_ETH, NILE_USDT),
        (USDC_ETH, DEVNET_TOKEN[:-1]),
        (USDC_ETH, DEVNET_TOKEN.replace("F", "f", 1)),  # broken EIP-55 checksum
        (USDT_TRON, DEVNET_TOKEN),
        (USDT_TRON, NILE_USDT[:-1] + "C"),  # broken base58check checksum
    ],
)
def test_a_malformed_override_is_refused(method, override):
    with pytest.raises(TokenContractError, match="not a valid"):
        token_contract(method, "testnet", {(method.asset, method.network): override})


def test_token_contract_error_is_a_value_error_for_settings_validators():
    assert issubclass(TokenContractError, ValueError)


# --- confirmations ----------------------------------------------------------


def test_default_confirmations_cover_every_network():
    assert DEFAULT_CONFIRMATIONS == {"bitcoin": 2, "litecoin": 6, "ethereum": 12, "tron": 19, "solana": 32}
    assert set(DEFAULT_CONFIRMATIONS) == {method.network for method in METHODS}
