"""Deposit addresses from an account-level extended public key.

The key is the account node (m/84'/0'/0' for BTC, m/84'/2'/0' for LTC,
m/44'/60'/0' for ETH, m/44'/195'/0' for TRON; coin type 1 on testnets) and
deposit addresses are on its external chain: account/0/index.
"""

from dataclasses import dataclass
from functools import lru_cache

from .addresses import ethereum_address, p2wpkh_address, tron_address
from .hd import HARDENED, ExtendedKeyError, ExtendedPublicKey, derive_public_child, parse_extended_public_key
from .networks import ChainParams

EXTERNAL_CHAIN = 0
ACCOUNT_DEPTH = 3


@dataclass(frozen=True, slots=True)
class DerivedAddress:
    address: str
    index: int
    path: str


def _check_account_key(key: ExtendedPublicKey, params: ChainParams) -> None:
    where = f"{params.network} {params.chain}"
    if key.version not in params.xpub_versions:
        accepted = ", ".join(sorted(params.xpub_versions))
        raise ExtendedKeyError(f"a {key.version} key is not accepted for {where} (accepted: {accepted})")
    if key.depth != ACCOUNT_DEPTH or key.child_number < HARDENED:
        raise ExtendedKeyError(
            f"expected an account-level key (depth {ACCOUNT_DEPTH}, hardened account number), "
            f"got depth {key.depth}, child number {key.child_number}"
        )


@lru_cache(maxsize=64)
def _external_chain(account_xpub: str, params: ChainParams) -> tuple[ExtendedPublicKey, str]:
    """The account's external chain key and its path; cached as every
    derivation for one account starts from the same node."""
    account = parse_extended_public_key(account_xpub)
    _check_account_key(account, params)
    account_number = account.child_number - HARDENED
    path = f"m/{params.purpose}'/{params.coin_type}'/{account_number}'/{EXTERNAL_CHAIN}"
    return derive_public_child(account, EXTERNAL_CHAIN), path


def _encode(key: ExtendedPublicKey, params: ChainParams) -> str:
    if params.network == "ethereum":
        return ethereum_address(key.uncompressed_public_key)
    if params.network == "tron":
        return tron_address(key.uncompressed_public_key)
    return p2wpkh_address(key.public_key, params.bech32_hrp)


def derive_deposit_address(network: str, account_xpub: str, index: int, chain_params: ChainParams) -> DerivedAddress:
    """Raise ExtendedKeyError for an unusable account key, ChildIndexError for
    a hardened or out-of-range index, ValueError for mismatched parameters."""
    if chain_params.network != network:
        raise ValueError(f"chain parameters are for {chain_params.network}, not {network}")
    chain_key, chain_path = _external_chain(account_xpub, chain_params)
    child = derive_public_child(chain_key, index)
    return DerivedAddress(_encode(child, chain_params), index, f"{chain_path}/{index}")
