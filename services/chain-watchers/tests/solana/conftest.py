"""A Solana double (LiteSVM behind agave's JSON-RPC) per test, producing blocks only when told."""

from __future__ import annotations

import pytest
from solders.keypair import Keypair

from infra.devnet.solana_double import SolanaDouble
from infra.devnet.solana_double.ledger import LAMPORTS_PER_SOL
from infra.devnet.solana_double.wallet import Wallet


@pytest.fixture
def node():
    with SolanaDouble() as double:
        yield double


@pytest.fixture
def wallet(node) -> Wallet:
    return Wallet(node.url)


def airdropped(double: SolanaDouble) -> Keypair:
    """A new keypair holding 10 SOL, airdropped in a block of its own."""
    keypair = Keypair()
    double.rpc("requestAirdrop", str(keypair.pubkey()), 10 * LAMPORTS_PER_SOL)
    double.rpc("double_produceBlocks", 1)
    return keypair


@pytest.fixture
def payer(node) -> Keypair:
    return airdropped(node)
