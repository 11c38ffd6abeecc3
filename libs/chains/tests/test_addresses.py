import pytest
from Crypto.PublicKey import ECC

from kernodeck_chains.addresses import (
    eip55_checksum,
    ethereum_address,
    is_valid_bitcoin_address,
    is_valid_ethereum_address,
    is_valid_litecoin_address,
    is_valid_solana_address,
    is_valid_tron_address,
    p2wpkh_address,
    tron_address,
    tron_hex_address,
)
from kernodeck_chains.base58 import b58encode
from kernodeck_chains.bech32 import Encoding, bech32_decode, decode_segwit_address, encode_segwit_address
from kernodeck_chains.networks import chain_params

pytestmark = pytest.mark.unit

BTC_MAIN = chain_params("bitcoin", "mainnet")
BTC_TEST = chain_params("bitcoin", "testnet")
BTC_REGTEST = chain_params("bitcoin", "regtest")
LTC_MAIN = chain_params("litecoin", "mainnet")
LTC_TEST = chain_params("litecoin", "testnet")

# --- Bech32 / Bech32m: BIP173 and BIP350 test vectors -----------------------


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("A12UEL5L", Encoding.BECH32),
        ("a12uel5l", Encoding.BECH32),
        ("an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs", Encoding.BECH32),
        ("abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw", Encoding.BECH32),
        ("11qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqc8247j", Encoding.BECH32),
        ("split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w", Encoding.BECH32),
        ("?1ezyfcl", Encoding.BECH32),
        ("A1LQFN3A", Encoding.BECH32M),
        ("a1lqfn3a", Encoding.BECH32M),
        (
            "an83characterlonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11sg7hg6",
            Encoding.BECH32M,
        ),
        ("abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqzd3ryx", Encoding.BECH32M),
        (
            "11llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllludsr8",
            Encoding.BECH32M,
        ),
        ("split1checkupstagehandshakeupstreamerranterredcaperredlc445v", Encoding.BECH32M),
        ("?1v759aa", Encoding.BECH32M),
    ],
)
def test_valid_bech32_strings(text, encoding):
    assert bech32_decode(text)[2] is encoding


@pytest.mark.parametrize(
    "text",
    [
        # BIP173
        "\x201nwldj5",
        "\x7f1axkwrx",
        "\x801eym55h",
        "an84characterslonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1569pvx",
        "pzry9x0s0muk",
        "1pzry9x0s0muk",
        "x1b4n0q5v",
        "li1dgmt3",
        "de1lg7wt\xff",
        "A1G7SGD8",
        "10a06t8",
        "1qzzfhee",
        # BIP350
        "\x201xj0phk",
        "\x7f1g6xzxy",
        "\x801vctc34",
        "an84characterslonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11d6pts4",
        "qyrz8wqd2c9m",
        "1qyrz8wqd2c9m",
        "y1b0jsk6g",
        "lt1igcx5c0",
        "in1muywd",
        "mm1crxm3i",
        "au1s5cgom",
        "M1VUXWEZ",
        "16plkw9",
        "1p2gdwpf",
    ],
)
def test_invalid_bech32_strings(text):
    with pytest.raises(ValueError):
        bech32_decode(text)


def _script_pubkey(version: int, program: bytes) -> str:
    return (bytes([version + 0x50 if version else 0, len(program)]) + program).hex()


# BIP350's list; it supersedes BIP173's for versions 1 to 16.
VALID_SEGWIT = [
    ("BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4", "0014751e76e8199196d454941c45d1b3a323f1433bd6"),
    (
        "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7",
        "00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262",
    ),
    (
        "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y",
        "5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6",
    ),
    ("BC1SW50QGDZ25J", "6002751e"),
    ("bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs", "5210751e76e8199196d454941c45d1b3a323"),
    (
        "tb1qqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesrxh6hy",
        "0020000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433",
    ),
    (
        "tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c",
        "5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433",
    ),
    (
        "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
        "512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
    ),
]


@pytest.mark.parametrize(("address", "script"), VALID_SEGWIT)
def test_valid_segwit_addresses(address, script):
    hrp = address[:2].lower()
    version, program = decode_segwit_address(hrp, address)
    assert _script_pubkey(version, program) == script
    assert encode_segwit_address(hrp, version, program) == address.lower()
    params = BTC_MAIN if hrp == "bc" else BTC_TEST
    assert is_valid_bitcoin_address(address, params)


INVALID_SEGWIT = [
    # BIP173
    "tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty",
    "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5",
    "BC13W508D6QEJXTDG4Y5R3ZARVARY0C5XW7KN40WF2",
    "bc1rw5uspcuh",
    "bc10w508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kw5rljs90",
    "BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P",
    "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7",
    "bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du",
    "tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3pjxtptv",
    "bc1gmk9yu",
    # BIP173's "valid" v1+ addresses use Bech32, which BIP350 made invalid.
    "bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7k7grplx",
    "BC1SW50QA3JX3S",
    "bc1zw508d6qejxtdg4y5r3zarvaryvg6kdaj",
    # BIP350
    "tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut",
    "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd",
    "tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf",
    "BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL",
    "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh",
    "tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47",
    "bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4",
    "BC130XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ7ZWS8R",
    "bc1pw5dgrnzv",
    "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v8n0nx0muaewav253zgeav",
    "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq",
    "bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf",
    "tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vpggkg4j",
]


@pytest.mark.parametrize("address", INVALID_SEGWIT)
def test_invalid_segwit_addresses(address):
    for hrp in ("bc", "tb"):
        with pytest.raises(ValueError):
            decode_segwit_address(hrp, address)
    assert not is_valid_bitcoin_address(address, BTC_MAIN)
    assert not is_valid_bitcoin_address(address, BTC_TEST)


# --- P2WPKH encoder: BIP84 vectors -----------------------------------------


@pytest.mark.parametrize(
    ("public_key", "address"),
    [
        (
            "0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c",
            "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu",
        ),
        (
            "03e775fd51f0dfb8cd865d9ff1cca2a158cf651fe997fdc9fee9c1d3b5e995ea77",
            "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g",
        ),
        (
            "03025324888e429ab8e3dbaf1f7802648b9cd01e9b418485c5fa4c1b9b5700e1a6",
            "bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el",
        ),
    ],
)
def test_p2wpkh_matches_bip84(public_key, address):
    assert p2wpkh_address(bytes.fromhex(public_key), "bc") == address


def test_p2wpkh_refuses_an_uncompressed_key():
    with pytest.raises(ValueError, match="compressed"):
        p2wpkh_address(b"\x04" + bytes(64), "bc")


# --- Bitcoin and Litecoin validators ----------------------------------------


@pytest.mark.parametrize(
    ("address", "params"),
    [
        ("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", BTC_MAIN),
        ("1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", BTC_MAIN),  # SLIP-132: m/44'/0'/0'/0/0
        ("37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf", BTC_MAIN),  # SLIP-132: m/49'/0'/0'/0/0
        ("tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl", BTC_TEST),
        ("mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", BTC_TEST),
        ("2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc", BTC_TEST),
        ("mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", BTC_REGTEST),
        ("ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh", LTC_MAIN),
        ("LUWPbpM43E2p7ZSh8cyTBEkvpHmr3cB8Ez", LTC_MAIN),  # m/44'/2'/0'/0/0 of "abandon ... about"
        ("MC8eZTCih4Q1kTf1Fxt76t5e4NtQv7stqZ", LTC_MAIN),
    ],
)
def test_valid_utxo_addresses(address, params):
    validator = is_valid_bitcoin_address if params.network == "bitcoin" else is_valid_litecoin_address
    assert validator(address, params)


@pytest.mark.parametrize(
    ("address", "params"),
    [
        ("tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl", BTC_MAIN),
        ("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", BTC_TEST),
        ("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", BTC_REGTEST),
        ("mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", BTC_MAIN),
        ("1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", BTC_TEST),
        ("1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabB", BTC_MAIN),  # checksum
        ("ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh", BTC_MAIN),
        ("LUWPbpM43E2p7ZSh8cyTBEkvpHmr3cB8Ez", BTC_MAIN),
        ("0x9858EfFD232B4033E47d90003D41EC34EcaEda94", BTC_MAIN),
        (" bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", BTC_MAIN),
        ("", BTC_MAIN),
        (None, BTC_MAIN),
        ("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", LTC_MAIN),
        ("1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", LTC_MAIN),
        ("37VucYSaXLCAsxYyAPfbSi9eh4iEcbShgf", LTC_MAIN),  # Litecoin's retired 0x05 P2SH
        ("2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc", LTC_TEST),  # and its retired 0xc4
        ("ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh", LTC_TEST),
    ],
)
def test_invalid_utxo_addresses(address, params):
    validator = is_valid_bitcoin_address if params.network == "bitcoin" else is_valid_litecoin_address
    assert not validator(address, params)


def test_regtest_and_litecoin_test_hrps():
    program = bytes(range(20))
    assert is_valid_bitcoin_address(encode_segwit_address("bcrt", 0, program), BTC_REGTEST)
    assert is_valid_litecoin_address(encode_segwit_address("tltc", 0, program), LTC_TEST)
    assert is_valid_litecoin_address(encode_segwit_address("rltc", 0, program), chain_params("litecoin", "regtest"))


def test_validator_refuses_another_networks_params():
    with pytest.raises(ValueError, match="litecoin"):
        is_valid_bitcoin_address("ltc1qjmxnz78nmc8nq77wuxh25n2es7rzm5c2rkk4wh", LTC_MAIN)


# --- Ethereum: EIP-55 -------------------------------------------------------

EIP55_VECTORS = [
    "0x52908400098527886E0F7030069857D2E4169EE7",
    "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "0xde709f2102306220921060314715629080e2fb77",
    "0x27b1fdb04752bbc536007a920d24acb045561c26",
    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
    "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
    "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
]


@pytest.mark.parametrize("address", EIP55_VECTORS)
def test_eip55_vectors(address):
    assert eip55_checksum(bytes.fromhex(address[2:])) == address
    assert is_valid_ethereum_address(address)


@pytest.mark.parametrize(
    "address",
    [
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD",  # one letter in the wrong case
        "0x5AAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA",
        "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed00",
        "5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed00",
        "0X5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "0xgaAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
        "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH",
        None,
    ],
)
def test_invalid_ethereum_addresses(address):
    assert not is_valid_ethereum_address(address)


def test_single_case_ethereum_addresses_carry_no_checksum():
    assert is_valid_ethereum_address("0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed")
    assert is_valid_ethereum_address("0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED")


def test_ethereum_and_tron_from_the_abandon_mnemonic(private_node):
    # Keys from private derivation (test-only) against the published addresses.
    eth_key = private_node("m/44'/60'/0'/0/0").uncompressed_public_key
    tron_key = private_node("m/44'/195'/0'/0/0").uncompressed_public_key
    assert ethereum_address(eth_key) == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
    assert tron_address(tron_key) == "TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH"


def test_account_encoders_refuse_a_compressed_key():
    compressed = bytes.fromhex("0330d54fd0dd420a6e5f8d3624f5f3482cae350f79d5f0753bf5beef9c2d91af3c")
    for encoder in (ethereum_address, tron_address):
        with pytest.raises(ValueError, match="uncompressed"):
            encoder(compressed)


# --- Tron -------------------------------------------------------------------


def test_tron_hex_form():
    # The USDT TRC-20 contract, in both forms as Tron's explorers show it.
    assert tron_hex_address("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t") == "41a614f803b6fd780986a42c78ec9c7f77e6ded13c"
    with pytest.raises(ValueError):
        tron_hex_address("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u")


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", True),
        ("TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", True),
        ("TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdh", False),  # checksum
        ("1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA", False),  # base58check, version 0x00
        ("0x9858EfFD232B4033E47d90003D41EC34EcaEda94", False),
        ("TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYd", False),
        ("", False),
        (None, False),
    ],
)
def test_tron_validator(address, valid):
    assert is_valid_tron_address(address) is valid


# --- Solana -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("address", "valid"),
    [
        ("HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk", True),  # m/44'/501'/0'/0' of "abandon ... about"
        # Program-derived addresses from Solana's documentation: off the curve.
        ("46GZzzetjCURsdFPb7rcnspbEMnCBXe9kpjrsZAkKb6X", False),
        ("GBNWBGxKmdcd7JrMnBdZke9Fumj9sir4rpbruwEGmR4y", False),
        ("EuRrNqJAofo7y3Jy6MGvF7eZAYegqYTwH2dnLCwDDGdP", False),
        ("TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH", False),
        ("0x9858EfFD232B4033E47d90003D41EC34EcaEda94", False),
        ("O" * 32, False),
        ("1" * 31, False),
        ("z" * 45, False),
        (None, False),
    ],
)
def test_solana_validator(address, valid):
    assert is_valid_solana_address(address) is valid


def test_solana_accepts_fresh_ed25519_keys():
    # pycryptodome's own Ed25519 arithmetic, independent of the validator's.
    for _ in range(50):
        public = ECC.generate(curve="Ed25519").public_key().export_key(format="raw")
        assert is_valid_solana_address(b58encode(public))
