import pytest

from kernodeck_chains.addresses import (
    ethereum_address,
    is_valid_bitcoin_address,
    is_valid_ethereum_address,
    is_valid_litecoin_address,
    is_valid_tron_address,
    p2wpkh_address,
    tron_address,
)
from kernodeck_chains.base58 import b58check_decode, b58check_encode
from kernodeck_chains.derivation import DerivedAddress, derive_deposit_address
from kernodeck_chains.hd import ChildIndexError, ExtendedKeyError
from kernodeck_chains.networks import chain_params

pytestmark = pytest.mark.unit

# Published account keys of "abandon abandon ... about" (BIP84, SLIP-132, and
# wallets' test suites); test_account_keys_match_the_mnemonic re-derives them.
BTC_ZPUB = (
    "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
)
BTC_TEST_VPUB = (
    "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"
)
LTC_XPUB = (
    "xpub6CjGURuDpczf6uNrCCwfhVizn5J3hsWcvZ2m6GAdmAjZnoWJPrx6TFPjGSftc2o5fvox6ubQjSXmjjaHZjwYMH7SGFpHHb9Jg24zBf66mbE"
)
ETH_XPUB = (
    "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
)
TRON_XPUB = (
    "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd"
)
# BIP32 test vector 1, m: a depth-0 key.
MASTER_XPUB = (
    "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
)

CASES = {
    # network, chain, account key, published addresses at index 0, 1, ...
    "btc": (
        "bitcoin",
        "mainnet",
        BTC_ZPUB,
        ["bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"],
    ),
    "btc-test": (
        "bitcoin",
        "testnet",
        BTC_TEST_VPUB,
        ["tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl", "tb1qd7spv5q28348xl4myc8zmh983w5jx32cjhkn97"],
    ),
    "ltc": (
        "litecoin",
        "mainnet",
        LTC_XPUB,
        ["ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh", "ltc1qwlezpr3890hcp6vva9twqh27mr6edadreqvhnn"],
    ),
    "eth": (
        "ethereum",
        "mainnet",
        ETH_XPUB,
        [
            "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
            "0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0",
            "0xb6716976A3ebe8D39aCEB04372f22Ff8e6802D7A",
        ],
    ),
    "tron": (
        "tron",
        "mainnet",
        TRON_XPUB,
        [
            "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH",
            "TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK",
            "TYJPRrdB5APNeRs4R7fYZSwW3TcrTKw2gx",
        ],
    ),
}
PATHS = {
    "btc": "m/84'/0'/0'",
    "btc-test": "m/84'/1'/0'",
    "ltc": "m/84'/2'/0'",
    "eth": "m/44'/60'/0'",
    "tron": "m/44'/195'/0'",
}


def _derive(case: str, index: int) -> DerivedAddress:
    network, chain, xpub, _ = CASES[case]
    return derive_deposit_address(network, xpub, index, chain_params(network, chain))


def _with_version(xpub: str, version: str) -> str:
    return b58check_encode(bytes.fromhex(version) + b58check_decode(xpub)[4:])


@pytest.mark.parametrize("case", CASES)
def test_published_deposit_addresses(case):
    for index, address in enumerate(CASES[case][3]):
        assert _derive(case, index) == DerivedAddress(address, index, f"{PATHS[case]}/0/{index}")


@pytest.mark.parametrize("case", CASES)
def test_account_keys_match_the_mnemonic(case, private_node):
    version = "vpub" if case == "btc-test" else "zpub" if case == "btc" else "xpub"
    assert private_node(PATHS[case]).xpub(version) == CASES[case][2]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("index", [0, 3, 1000, 2**31 - 1])
def test_public_derivation_agrees_with_private_derivation(case, index, private_node):
    network, chain, _, _ = CASES[case]
    key = private_node(f"{PATHS[case]}/0/{index}")
    params = chain_params(network, chain)
    expected = {
        "bitcoin": lambda: p2wpkh_address(key.public_key, params.bech32_hrp),
        "litecoin": lambda: p2wpkh_address(key.public_key, params.bech32_hrp),
        "ethereum": lambda: ethereum_address(key.uncompressed_public_key),
        "tron": lambda: tron_address(key.uncompressed_public_key),
    }[network]()
    assert _derive(case, index).address == expected


def test_accounts_other_than_zero_carry_their_number_in_the_path(private_node):
    account = private_node("m/84'/0'/7'")
    derived = derive_deposit_address("bitcoin", account.xpub("zpub"), 2, chain_params("bitcoin", "mainnet"))
    assert derived.path == "m/84'/0'/7'/0/2"
    assert derived.address == p2wpkh_address(private_node("m/84'/0'/7'/0/2").public_key, "bc")


@pytest.mark.parametrize(("case", "versions"), [("btc", ["0488b21e"]), ("ltc", ["04b24746", "019da462"])])
def test_every_accepted_prefix_gives_the_same_addresses(case, versions):
    network, chain, xpub, addresses = CASES[case]
    for version in versions:
        derived = derive_deposit_address(network, _with_version(xpub, version), 0, chain_params(network, chain))
        assert derived.address == addresses[0]


VALIDATORS = {
    "btc": lambda address: is_valid_bitcoin_address(address, chain_params("bitcoin", "mainnet")),
    "btc-test": lambda address: is_valid_bitcoin_address(address, chain_params("bitcoin", "testnet")),
    "ltc": lambda address: is_valid_litecoin_address(address, chain_params("litecoin", "mainnet")),
    "eth": is_valid_ethereum_address,
    "tron": is_valid_tron_address,
}


@pytest.mark.parametrize("case", CASES)
def test_distinct_indexes_give_distinct_valid_addresses(case):
    addresses = [_derive(case, index).address for index in range(300)]
    assert len(set(addresses)) == len(addresses)
    assert all(VALIDATORS[case](address) for address in addresses)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(
    ("index", "error"),
    [
        (2**31, ChildIndexError),
        (2**32 + 5, ChildIndexError),
        (-1, ChildIndexError),
        (1.0, TypeError),
        (True, TypeError),
    ],
)
def test_unusable_indexes_are_refused(case, index, error):
    with pytest.raises(error):
        _derive(case, index)


@pytest.mark.parametrize("case", CASES)
def test_corrupted_account_key_is_refused(case):
    network, chain, xpub, _ = CASES[case]
    corrupted = xpub[:60] + ("2" if xpub[60] != "2" else "3") + xpub[61:]
    with pytest.raises(ExtendedKeyError, match="checksum"):
        derive_deposit_address(network, corrupted, 0, chain_params(network, chain))


@pytest.mark.parametrize(
    ("network", "chain", "xpub"),
    [
        ("bitcoin", "mainnet", BTC_TEST_VPUB),  # a testnet key on mainnet
        ("bitcoin", "mainnet", _with_version(BTC_ZPUB, "043587cf")),  # tpub
        ("bitcoin", "mainnet", _with_version(BTC_ZPUB, "049d7cb2")),  # ypub: nested segwit
        ("bitcoin", "testnet", BTC_ZPUB),  # a mainnet key on testnet
        ("bitcoin", "regtest", BTC_ZPUB),
        ("litecoin", "mainnet", _with_version(LTC_XPUB, "01b26ef6")),  # Mtub: nested segwit
        ("litecoin", "testnet", LTC_XPUB),
        ("ethereum", "mainnet", _with_version(ETH_XPUB, "04b24746")),  # zpub
        ("tron", "mainnet", _with_version(TRON_XPUB, "043587cf")),  # tpub
    ],
)
def test_wrong_version_for_the_network_is_refused(network, chain, xpub):
    with pytest.raises(ExtendedKeyError, match="not accepted"):
        derive_deposit_address(network, xpub, 0, chain_params(network, chain))


@pytest.mark.parametrize("path", ["m", "m/84'/0'", "m/84'/0'/0'/0", "m/84'/0'/0'/0/0"])
def test_only_account_level_keys_are_accepted(path, private_node):
    with pytest.raises(ExtendedKeyError, match="account-level"):
        derive_deposit_address("bitcoin", private_node(path).xpub("zpub"), 0, chain_params("bitcoin", "mainnet"))


def test_non_hardened_depth_three_key_is_not_an_account_key(private_node):
    with pytest.raises(ExtendedKeyError, match="account-level"):
        derive_deposit_address(
            "bitcoin", private_node("m/84'/0'/0").xpub("zpub"), 0, chain_params("bitcoin", "mainnet")
        )


def test_master_key_is_refused():
    with pytest.raises(ExtendedKeyError, match="account-level"):
        derive_deposit_address("ethereum", MASTER_XPUB, 0, chain_params("ethereum", "mainnet"))


def test_private_account_key_is_refused(private_node):
    node = private_node("m/84'/0'/0'")
    zprv = b58check_encode(
        bytes.fromhex("04b2430c")
        + bytes([node.depth])
        + node.parent_fingerprint
        + node.child_number.to_bytes(4, "big")
        + node.chain_code
        + b"\0"
        + node.secret.to_bytes(32, "big")
    )
    with pytest.raises(ExtendedKeyError, match="PRIVATE"):
        derive_deposit_address("bitcoin", zprv, 0, chain_params("bitcoin", "mainnet"))


def test_parameters_of_another_network_are_refused():
    with pytest.raises(ValueError, match="bitcoin, not litecoin"):
        derive_deposit_address("litecoin", BTC_ZPUB, 0, chain_params("bitcoin", "mainnet"))


def test_same_key_on_two_networks_keeps_each_networks_format():
    xpub = _with_version(BTC_ZPUB, "0488b21e")
    btc = derive_deposit_address("bitcoin", xpub, 0, chain_params("bitcoin", "mainnet"))
    ltc = derive_deposit_address("litecoin", xpub, 0, chain_params("litecoin", "mainnet"))
    assert btc.address.startswith("bc1q") and ltc.address.startswith("ltc1q")
    assert ltc.path == "m/84'/2'/0'/0/0"


@pytest.mark.parametrize(
    ("network", "chain", "reason"),
    [("solana", "mainnet", "operator pool"), ("bitcoin", "signet", "signet"), ("dogecoin", "mainnet", "dogecoin")],
)
def test_unknown_network_or_chain(network, chain, reason):
    with pytest.raises(ValueError, match=reason):
        chain_params(network, chain)
