from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import pytest

from kernodeck_chains.amounts import format_amount
from kernodeck_chains.uris import payment_uri

pytestmark = pytest.mark.unit


@dataclass(frozen=True)
class Asset:
    asset: str
    network: str
    decimals: int
    token_kind: str | None = None


BTC = Asset("BTC", "bitcoin", 8)
LTC = Asset("LTC", "litecoin", 8)
ETH = Asset("ETH", "ethereum", 18)
USDT_ETH = Asset("USDT", "ethereum", 6, "erc20")
USDC_ETH = Asset("USDC", "ethereum", 6, "erc20")
TRX = Asset("TRX", "tron", 6)
USDT_TRON = Asset("USDT", "tron", 6, "trc20")
SOL = Asset("SOL", "solana", 9)

TETHER_ETH = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
TETHER_TRON = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
ETH_ADDRESS = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
TRON_ADDRESS = "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"
LTC_ADDRESS = "ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh"
SOL_ADDRESS = "mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN"


# --- BIP21 ------------------------------------------------------------------


def test_bip21_example_amount():
    # BIP21: "Request 20.30 BTC to "Luke-Jr"", without the label.
    uri = payment_uri(BTC, "175tWpb8K1S7NmH4Zx6rewF9WQrcZv245W", 2_030_000_000, None)
    assert uri == "bitcoin:175tWpb8K1S7NmH4Zx6rewF9WQrcZv245W?amount=20.3"


def test_bip21_example_whole_amount():
    uri = payment_uri(BTC, "175tWpb8K1S7NmH4Zx6rewF9WQrcZv245W", 50 * 10**8, None)
    assert uri == "bitcoin:175tWpb8K1S7NmH4Zx6rewF9WQrcZv245W?amount=50"


def test_bip21_amount_down_to_the_satoshi():
    uri = payment_uri(BTC, "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", 123_456, None)
    assert uri == "bitcoin:bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu?amount=0.00123456"


def test_litecoin_uses_the_litecoin_scheme():
    assert payment_uri(LTC, LTC_ADDRESS, 50_000_000, None) == f"litecoin:{LTC_ADDRESS}?amount=0.5"


# --- EIP-681 ----------------------------------------------------------------


def test_eip681_example_value_as_a_plain_integer_of_wei():
    # EIP-681's example writes value=2.014e18; the same request in plain digits.
    uri = payment_uri(ETH, "0xfb6916095ca1df60bb79Ce92ce3ea74c37c5d359", 2_014 * 10**15, None)
    assert uri == "ethereum:0xfb6916095ca1df60bb79Ce92ce3ea74c37c5d359?value=2014000000000000000"


def test_ether_request_with_a_chain_id():
    uri = payment_uri(ETH, ETH_ADDRESS, 10**18, None, chain_id=31337)
    assert uri == f"ethereum:{ETH_ADDRESS}@31337?value=1000000000000000000"


def test_eip681_token_transfer_example():
    # EIP-681's ERC-20 example, character for character.
    uri = payment_uri(
        USDT_ETH,
        "0x8e23ee67d1332ad560396262c48ffbb01f93d052",
        1,
        "0x89205a3a3b2a69de6dbf7f01ed13b2108b2c43e7",
    )
    assert uri == (
        "ethereum:0x89205a3a3b2a69de6dbf7f01ed13b2108b2c43e7/transfer"
        "?address=0x8e23ee67d1332ad560396262c48ffbb01f93d052&uint256=1"
    )


def test_erc20_transfer_on_mainnet_with_its_chain_id():
    uri = payment_uri(USDT_ETH, ETH_ADDRESS, 100_030_000, TETHER_ETH, chain_id=1)
    assert uri == f"ethereum:{TETHER_ETH}@1/transfer?address={ETH_ADDRESS}&uint256=100030000"


# --- Solana Pay and Tron ----------------------------------------------------


def test_solana_pay_transfer_request_in_sol():
    # Solana Pay's own example recipient; the amount is in SOL, not lamports.
    assert payment_uri(SOL, SOL_ADDRESS, 10**9, None) == f"solana:{SOL_ADDRESS}?amount=1"
    assert payment_uri(SOL, SOL_ADDRESS, 70_000, None) == f"solana:{SOL_ADDRESS}?amount=0.00007"


def test_trx_request():
    assert payment_uri(TRX, TRON_ADDRESS, 12_500_000, None) == f"tron:{TRON_ADDRESS}?amount=12.5"


def test_trc20_request_names_the_token_contract():
    uri = payment_uri(USDT_TRON, TRON_ADDRESS, 100_030_000, TETHER_TRON)
    assert uri == f"tron:{TRON_ADDRESS}?amount=100.03&token={TETHER_TRON}"


# --- every asset ------------------------------------------------------------

CASES = {
    BTC: ("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", None),
    ETH: (ETH_ADDRESS, None),
    USDT_ETH: (ETH_ADDRESS, TETHER_ETH),
    USDC_ETH: (ETH_ADDRESS, "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"),
    TRX: (TRON_ADDRESS, None),
    USDT_TRON: (TRON_ADDRESS, TETHER_TRON),
    SOL: (SOL_ADDRESS, None),
    LTC: (LTC_ADDRESS, None),
}


@pytest.mark.parametrize("method", CASES, ids=lambda method: f"{method.asset}-{method.network}")
def test_every_uri_parses_back_to_its_address_and_amount(method):
    address, contract = CASES[method]
    base_units = 123_450 * 10 ** (method.decimals - 2)
    parts = urlsplit(payment_uri(method, address, base_units, contract))
    query = parse_qs(parts.query, strict_parsing=True)
    if method.network == "ethereum":
        assert parts.scheme == "ethereum"
        if contract:
            assert parts.path == f"{contract}/transfer"
            assert query == {"address": [address], "uint256": [str(base_units)]}
        else:
            assert parts.path == address
            assert query == {"value": [str(base_units)]}
    else:
        assert (parts.scheme, parts.path) == (method.network, address)
        assert query.pop("amount") == [format_amount(base_units, method.decimals)]
        assert query == ({"token": [contract]} if contract else {})


def test_the_address_is_percent_encoded():
    # Never the case for a derived address; shows a stray character cannot add a parameter.
    assert payment_uri(BTC, "a b&amount=1", 1, None) == "bitcoin:a%20b%26amount%3D1?amount=0.00000001"
    assert payment_uri(ETH, "0x1?value=9", 1, None) == "ethereum:0x1%3Fvalue%3D9?value=1"
    uri = payment_uri(USDT_ETH, "0x1&uint256=9", 1, "0x2/x")
    assert uri == "ethereum:0x2%2Fx/transfer?address=0x1%26uint256%3D9&uint256=1"


# --- refusals ---------------------------------------------------------------


@pytest.mark.parametrize("method", [USDT_ETH, USDC_ETH, USDT_TRON], ids=lambda m: f"{m.asset}-{m.network}")
def test_a_token_needs_its_contract(method):
    with pytest.raises(ValueError, match="is a token"):
        payment_uri(method, CASES[method][0], 1, None)


@pytest.mark.parametrize("method", [BTC, ETH, TRX], ids=lambda m: m.asset)
def test_a_native_coin_takes_no_contract(method):
    with pytest.raises(ValueError, match="native coin"):
        payment_uri(method, CASES[method][0], 1, TETHER_ETH)


@pytest.mark.parametrize("method", [BTC, TRX, SOL, LTC], ids=lambda m: m.asset)
def test_a_chain_id_applies_to_ethereum_only(method):
    with pytest.raises(ValueError, match="chain id"):
        payment_uri(method, CASES[method][0], 1, CASES[method][1], chain_id=1)


@pytest.mark.parametrize("chain_id", [0, -1, True, "1"])
def test_a_chain_id_is_a_positive_int(chain_id):
    with pytest.raises(ValueError, match="chain_id"):
        payment_uri(ETH, ETH_ADDRESS, 1, None, chain_id=chain_id)


@pytest.mark.parametrize("base_units", [0, -1, True, 1.0, "1"])
def test_the_amount_is_a_positive_int(base_units):
    with pytest.raises(ValueError, match="base_units"):
        payment_uri(BTC, "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", base_units, None)
