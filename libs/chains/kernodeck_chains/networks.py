"""Per-network parameters for deposit addresses: which account key prefixes
are accepted, the BIP44/BIP84 account path, and the address formats.

`network` is the product's word (bitcoin, litecoin, ethereum, tron); `chain`
is mainnet, testnet or regtest, as in Bitcoin Core's -chain option.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChainParams:
    network: str
    chain: str
    purpose: int  # BIP43 purpose: 84 (P2WPKH) or 44
    coin_type: int  # SLIP-44; every testnet uses 1
    # SLIP-132 prefixes accepted for the account key. A prefix that announces
    # another address type (ypub/Mtub: nested segwit) is refused rather than
    # silently giving addresses its owner's wallet does not watch.
    xpub_versions: frozenset[str]
    bech32_hrp: str = ""  # segwit human-readable part; empty for account-based networks
    # Base58Check version bytes of P2PKH and P2SH addresses, for validation only.
    legacy_versions: frozenset[int] = frozenset()


def _bip84(network: str, chain: str, coin_type: int, xpubs: set[str], hrp: str, legacy: set[int]) -> ChainParams:
    return ChainParams(network, chain, 84, coin_type, frozenset(xpubs), hrp, frozenset(legacy))


def _bip44(network: str, chain: str, coin_type: int) -> ChainParams:
    return ChainParams(network, chain, 44, coin_type, frozenset({"xpub"}))


_TABLE = {
    (params.network, params.chain): params
    for params in (
        _bip84("bitcoin", "mainnet", 0, {"xpub", "zpub"}, "bc", {0x00, 0x05}),
        _bip84("bitcoin", "testnet", 1, {"tpub", "vpub"}, "tb", {0x6F, 0xC4}),
        _bip84("bitcoin", "regtest", 1, {"tpub", "vpub"}, "bcrt", {0x6F, 0xC4}),
        # Litecoin's P2SH moved from 0x05 ("3...", shared with Bitcoin) to 0x32
        # ("M..."); the old byte is refused so a Bitcoin address cannot pass.
        _bip84("litecoin", "mainnet", 2, {"xpub", "zpub", "Ltub"}, "ltc", {0x30, 0x32}),
        _bip84("litecoin", "testnet", 1, {"tpub", "vpub", "ttub"}, "tltc", {0x6F, 0x3A}),
        _bip84("litecoin", "regtest", 1, {"tpub", "vpub", "ttub"}, "rltc", {0x6F, 0x3A}),
        # Ethereum and Tron addresses do not depend on the chain, and wallets
        # export their account keys as xpub on every chain (regtest: a local dev
        # chain such as anvil).
        *(_bip44("ethereum", chain, 60) for chain in ("mainnet", "testnet", "regtest")),
        *(_bip44("tron", chain, 195) for chain in ("mainnet", "testnet", "regtest")),
    )
}


def chain_params(network: str, chain: str) -> ChainParams:
    params = _TABLE.get((network, chain))
    if params is None:
        if network == "solana":
            raise ValueError("solana has no public derivation (ed25519); deposit addresses come from the operator pool")
        raise ValueError(f"no deposit address parameters for network {network!r} on chain {chain!r}")
    return params
