"""The watcher core's scanner over SolanaClient and the double: payments across skipped slots, confirmations,
and a dropped fork reverted, one slot at a time and reading ahead."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from solders.keypair import Keypair

from kernodeck_kit.units import MemoryUnits
from kernodeck_watchers.chains.solana import SolanaClient
from kernodeck_watchers.domain.progress import Progress
from kernodeck_watchers.domain.watched import WatchedAddresses
from kernodeck_watchers.scanner import Scanner

CONFIRMATIONS = 3


def scanner(units: MemoryUnits, node, watched: str, fetch_ahead: int = 1) -> Scanner:
    addresses = WatchedAddresses(default_required=CONFIRMATIONS)
    addresses.add(watched, CONFIRMATIONS)
    return Scanner(
        units=units,
        client=SolanaClient(node.url, commitment="confirmed", fetch_ahead=fetch_ahead),
        watched=addresses,
        progress=Progress(since=datetime.now(UTC)),
        history_blocks=50,
    )


@pytest.mark.parametrize("fetch_ahead", [1, 8])
def test_a_payment_across_skipped_slots_is_seen_then_confirmed(units, events, node, wallet, payer, fetch_ahead):
    watched = Keypair().pubkey()
    watcher = scanner(units, node, str(watched), fetch_ahead)
    watcher.run()
    node.rpc("double_skipSlots", 2)
    paid = wallet.transfer(payer, watched, 25_000_000)
    node.rpc("double_produceBlocks", 2)
    watcher.run()
    node.rpc("double_skipSlots", 1)
    node.rpc("double_produceBlocks", 2)
    watcher.run()

    # heights are slots: paid in slot S, S+2 skipped, confirmed up to S+3: 4 confirmations
    assert [(kind, confirmations) for kind, txid, confirmations in events.kinds() if txid == paid] == [
        ("transfer_seen", 1),
        ("transfer_confirmed", 4),
    ]


@pytest.mark.parametrize("fetch_ahead", [1, 8])
def test_a_payment_in_a_dropped_fork_is_reverted(units, events, node, wallet, payer, fetch_ahead):
    watched = Keypair().pubkey()
    watcher = scanner(units, node, str(watched), fetch_ahead)
    watcher.run()
    lost = wallet.transfer(payer, watched, 25_000_000)
    node.rpc("double_produceBlocks", 2)
    watcher.run()

    node.rpc("double_dropBlocks", 2)
    node.rpc("double_produceBlocks", 3)
    watcher.run()

    assert [kind for kind, txid, _ in events.kinds() if txid == lost] == ["transfer_seen", "transfer_reverted"]
