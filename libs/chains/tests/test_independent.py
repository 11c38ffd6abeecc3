"""The library against independent implementations, on keys and indices that hypothesis draws.

embit (BIP32, base58, bech32, BIP84 scripts), eth-utils (EIP-55, Keccak) and solders (Solana keys) are
installed for the tests only: the same bytes, addresses and answers, or the test fails.
"""

import eth_utils
import pytest
from embit import base58 as embit_base58
from embit import bech32 as embit_bech32
from embit import bip32, ec, script
from embit.networks import NETWORKS
from hypothesis import given, settings
from hypothesis import strategies as st
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from kernodeck_chains.addresses import (
    eip55_checksum,
    is_valid_ethereum_address,
    is_valid_solana_address,
    tron_address_of,
)
from kernodeck_chains.base58 import b58check_decode, b58check_encode, b58decode, b58encode
from kernodeck_chains.bech32 import decode_segwit_address, encode_segwit_address
from kernodeck_chains.derivation import derive_deposit_address
from kernodeck_chains.hd import HARDENED
from kernodeck_chains.networks import chain_params

pytestmark = pytest.mark.unit

seeds = st.binary(min_size=16, max_size=64)
accounts = st.integers(min_value=0, max_value=HARDENED - 1)
indices = st.integers(min_value=0, max_value=HARDENED - 1)
# Each example derives a few keys in pure Python on both sides: enough draws to cover the
# shapes (leading zero bytes, high account numbers), few enough to stay well under a second.
few = settings(max_examples=50, deadline=None)

LITECOIN = {**NETWORKS["main"], "bech32": "ltc"}
# (network, chain): (account path purpose'/coin type', embit network for the key's version and the address)
UTXO = {
    ("bitcoin", "mainnet"): ("84h/0h", NETWORKS["main"]),
    ("bitcoin", "regtest"): ("84h/1h", NETWORKS["regtest"]),
    ("litecoin", "mainnet"): ("84h/2h", LITECOIN),
}


def account_key(seed: bytes, path: str, account: int) -> bip32.HDKey:
    return bip32.HDKey.from_seed(seed).derive(f"m/{path}/{account}h").to_public()


def uncompressed(key: ec.PublicKey) -> bytes:
    point = ec.PublicKey.parse(key.sec())
    point.compressed = False
    return point.sec()


@pytest.mark.parametrize(("network", "chain"), list(UTXO))
@few
@given(seed=seeds, account=accounts, index=indices)
def test_segwit_deposit_addresses_are_embits(network, chain, seed, account, index):
    path, embit_network = UTXO[(network, chain)]
    account_xpub = account_key(seed, path, account)
    expected = script.p2wpkh(account_xpub.derive([0, index]).key).address(embit_network)
    derived = derive_deposit_address(
        network, account_xpub.to_string(version=embit_network["xpub"]), index, chain_params(network, chain)
    )
    assert derived.address == expected
    assert derived.path == f"m/{path.replace('h', chr(39))}/{account}'/0/{index}"


@few
@given(seed=seeds, account=accounts, index=indices)
def test_ethereum_deposit_addresses_are_eth_utils_checksummed_keccak_of_embits_keys(seed, account, index):
    account_xpub = account_key(seed, "44h/60h", account)
    public_key = uncompressed(account_xpub.derive([0, index]).key)
    expected = eth_utils.to_checksum_address(eth_utils.keccak(public_key[1:])[-20:])
    derived = derive_deposit_address("ethereum", account_xpub.to_string(), index, chain_params("ethereum", "mainnet"))
    assert derived.address == expected


@few
@given(seed=seeds, account=accounts, index=indices)
def test_tron_deposit_addresses_are_embits_base58check_of_the_account_id(seed, account, index):
    account_xpub = account_key(seed, "44h/195h", account)
    public_key = uncompressed(account_xpub.derive([0, index]).key)
    expected = embit_base58.encode_check(b"\x41" + eth_utils.keccak(public_key[1:])[-20:])
    derived = derive_deposit_address("tron", account_xpub.to_string(), index, chain_params("tron", "mainnet"))
    assert derived.address == expected
    assert tron_address_of(eth_utils.keccak(public_key[1:])[-20:]) == expected


@given(st.binary(max_size=80))
def test_base58_and_base58check_are_embits(data):
    assert b58encode(data) == embit_base58.encode(data)
    assert b58decode(embit_base58.encode(data)) == data
    assert b58check_encode(data) == embit_base58.encode_check(data)
    assert b58check_decode(embit_base58.encode_check(data)) == data


@given(
    hrp=st.sampled_from(["bc", "tb", "bcrt", "ltc", "rltc"]),
    version=st.integers(min_value=0, max_value=16),
    program=st.binary(min_size=2, max_size=40),
)
def test_segwit_addresses_are_embits(hrp, version, program):
    if version == 0 and len(program) not in (20, 32):
        with pytest.raises(ValueError):
            encode_segwit_address(hrp, version, program)
        return
    address = encode_segwit_address(hrp, version, program)
    assert address == embit_bech32.encode(hrp, version, program)
    assert decode_segwit_address(hrp, address) == (version, program)


@given(st.binary(min_size=20, max_size=20))
def test_eip55_is_eth_utils(account_id):
    checksummed = eip55_checksum(account_id)
    assert checksummed == eth_utils.to_checksum_address(account_id)
    assert is_valid_ethereum_address(checksummed)


@given(st.binary(min_size=20, max_size=20), st.integers(min_value=0, max_value=39))
def test_a_mixed_case_address_passes_exactly_when_eth_utils_calls_it_checksummed(account_id, flipped):
    text = eip55_checksum(account_id)
    position = 2 + flipped
    altered = text[:position] + text[position].swapcase() + text[position + 1 :]
    mixed = altered[2:] not in (altered[2:].lower(), altered[2:].upper())
    assert is_valid_ethereum_address(altered) == (eth_utils.is_checksum_address(altered) or not mixed)


@settings(max_examples=50)
@given(st.binary(min_size=32, max_size=32))
def test_solana_wallet_keys_are_valid_deposit_addresses(seed):
    public_key = Keypair.from_seed(seed).pubkey()
    assert is_valid_solana_address(str(public_key))
    assert b58decode(str(public_key)) == bytes(public_key)


@given(st.binary(min_size=32, max_size=32))
def test_an_address_is_valid_exactly_when_solders_puts_it_on_the_curve(key):
    assert is_valid_solana_address(b58encode(key)) == Pubkey(key).is_on_curve()
