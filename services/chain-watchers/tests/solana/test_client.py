"""SolanaClient against the double: transactions executed by the real SVM, read back through standard JSON-RPC."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from solders.keypair import Keypair

from infra.devnet.solana_double.ledger import LAMPORTS_PER_SOL
from kernodeck_watchers.chains.base import BlockRef, NodeError, SeenTransfer
from kernodeck_watchers.chains.solana import SolanaClient


def scan(client: SolanaClient, start: int, end: int) -> list[BlockRef]:
    """Every height from start to end, as the watcher core reads them, checking that parents chain."""
    refs = [client.block(height) for height in range(start, end + 1)]
    for parent, child in itertools.pairwise(refs):
        assert child.parent_hash == parent.hash, f"slot {child.height} does not follow slot {parent.height}"
    return refs


def test_a_transfer_to_a_watched_address_is_found_with_its_exact_amount_in_its_slot(node, wallet, payer):
    watched, unwatched = Keypair().pubkey(), Keypair().pubkey()
    signature = wallet.transfer(payer, watched, 1_234_567)
    wallet.transfer(payer, unwatched, 2_000_000)
    slot = node.rpc("double_produceBlocks", 1)
    node.rpc("double_produceBlocks", 1)  # `confirmed` trails the newest block by one
    client = SolanaClient(node.url, commitment="confirmed")

    assert client.tip().height == slot
    transfers = client.transfers_in_block(client.block(slot), {str(watched)})

    # account keys: [payer, recipient, System program]
    assert transfers == [SeenTransfer(signature, 1, str(watched), None, 1_234_567)]
    assert client.transfers_in_block(client.block(slot - 1), {str(watched)}) == []


def test_a_transfer_to_an_unwatched_address_is_ignored(node, wallet, payer):
    wallet.transfer(payer, Keypair().pubkey(), 3_000_000)
    slot = node.rpc("double_produceBlocks", 2) - 1
    client = SolanaClient(node.url, commitment="confirmed")
    # the System program is in the transaction too, its balance unchanged
    watched = {str(Keypair().pubkey()), "11111111111111111111111111111111"}

    assert client.transfers_in_block(client.block(slot), watched) == []


def test_a_block_is_fetched_once_and_a_changed_one_is_refused(node, wallet, payer, monkeypatch):
    watched = Keypair().pubkey()
    wallet.transfer(payer, watched, 3_000_000)
    slot = node.rpc("double_produceBlocks", 2) - 1
    client = SolanaClient(node.url, commitment="confirmed")
    calls = []
    answer = node.rpc_handler.call
    monkeypatch.setattr(node.rpc_handler, "call", lambda name, params: calls.append(name) or answer(name, params))

    ref = client.block(slot)
    assert len(client.transfers_in_block(ref, {str(watched)})) == 1
    assert calls == ["getBlock"]

    node.rpc("double_dropBlocks", 2)  # the block at that slot is gone
    node.rpc("double_produceBlocks", 2)
    with pytest.raises(NodeError):  # a ref without the block's contents: read again, by slot
        client.transfers_in_block(dataclasses.replace(ref, payload=None), {str(watched)})


def test_a_failed_transfer_is_not_reported_though_its_block_holds_it(node, wallet, payer):
    watched = Keypair().pubkey()
    signature = wallet.transfer(payer, watched, 100 * LAMPORTS_PER_SOL, skipPreflight=True)  # payer has 10 SOL
    slot = node.rpc("double_produceBlocks", 2) - 1
    client = SolanaClient(node.url, commitment="confirmed")

    block = node.rpc("getBlock", slot, {"commitment": "confirmed"})
    assert [t["transaction"]["signatures"][0] for t in block["transactions"]] == [signature]
    assert block["transactions"][0]["meta"]["err"] == {"InstructionError": [0, {"Custom": 1}]}
    assert client.transfers_in_block(client.block(slot), {str(watched), str(payer.pubkey())}) == []
    assert client.address_activity([str(watched)], 0) == []


def test_a_transfer_is_seen_at_confirmed_before_it_is_finalized(node, wallet, payer):
    watched = Keypair().pubkey()
    signature = wallet.transfer(payer, watched, 5_000_000)
    slot = node.rpc("double_produceBlocks", 1)
    confirmed = SolanaClient(node.url, commitment="confirmed")
    finalized = SolanaClient(node.url, commitment="finalized")

    status = node.rpc("getSignatureStatuses", [signature])["value"][0]
    assert (status["slot"], status["confirmationStatus"]) == (slot, "processed")
    assert confirmed.tip().height < slot

    node.rpc("double_produceBlocks", 1)
    assert confirmed.tip().height == slot
    assert [t.amount for t in confirmed.transfers_in_block(confirmed.block(slot), {str(watched)})] == [5_000_000]
    assert finalized.tip().height < slot
    with pytest.raises(NodeError):
        finalized.block(slot)  # not finalized yet: the node has no finalized block there

    node.rpc("double_produceBlocks", 30)
    assert finalized.tip().height == slot
    assert [t.txid for t in finalized.transfers_in_block(finalized.block(slot), {str(watched)})] == [signature]


# getBlock answers a skipped slot with -32007 once finalized, with -32004 above the finalized root
@pytest.mark.parametrize(("commitment", "blocks_after"), [("confirmed", 2), ("finalized", 32)])
def test_skipped_slots_scan_as_empty_refs_that_keep_the_parent_chain(node, wallet, payer, commitment, blocks_after):
    watched = Keypair().pubkey()
    node.rpc("double_skipSlots", 3)
    signature = wallet.transfer(payer, watched, 7_000_000)
    paid_slot = node.rpc("double_produceBlocks", 1)
    node.rpc("double_skipSlots", 2)
    node.rpc("double_produceBlocks", blocks_after)
    client = SolanaClient(node.url, commitment=commitment)

    refs = scan(client, 0, paid_slot + 3)

    skipped = [ref for ref in refs if ref.hash == ref.parent_hash]
    assert [ref.height for ref in skipped] == [
        paid_slot - 3,
        paid_slot - 2,
        paid_slot - 1,
        paid_slot + 1,
        paid_slot + 2,
    ]
    assert skipped[0].hash == refs[paid_slot - 4].hash  # the newest block before the gap
    found = {ref.height: client.transfers_in_block(ref, {str(watched)}) for ref in refs}
    assert {h: [(t.txid, t.amount) for t in ts] for h, ts in found.items() if ts} == {
        paid_slot: [(signature, 7_000_000)]
    }


def test_a_dropped_fork_changes_the_hash_at_its_heights_and_takes_the_transfer_away(node, wallet, payer):
    watched = Keypair().pubkey()
    wallet.transfer(payer, watched, 9_000_000)
    paid_slot = node.rpc("double_produceBlocks", 2) - 1
    node.rpc("double_produceBlocks", 1)
    client = SolanaClient(node.url, commitment="confirmed")
    before = scan(client, paid_slot - 1, paid_slot + 1)
    assert len(client.transfers_in_block(before[1], {str(watched)})) == 1

    node.rpc("double_dropBlocks", 3)  # the fork from paid_slot on is abandoned
    node.rpc("double_produceBlocks", 2)
    after = scan(client, paid_slot - 1, paid_slot + 3)

    assert after[0] == before[0]  # the common ancestor
    assert after[1].hash != before[1].hash  # the core's parent-hash check sees the reorg here
    assert all(client.transfers_in_block(ref, {str(watched)}) == [] for ref in after)
    assert client.address_activity([str(watched)], 0) == []


def test_address_activity_lists_what_the_address_received_with_slots(node, wallet, payer):
    watched = Keypair().pubkey()
    first = wallet.transfer(payer, watched, 1_000_000)
    first_slot = node.rpc("double_produceBlocks", 1)
    second = wallet.transfer(payer, watched, 2_000_000)
    second_slot = node.rpc("double_produceBlocks", 1)
    third = wallet.transfer(payer, watched, 3_000_000)
    third_slot = node.rpc("double_produceBlocks", 2) - 1
    client = SolanaClient(node.url, commitment="confirmed")
    client.signatures_page = 2  # so that the three transfers take two pages

    activity = client.address_activity([str(watched)], first_slot)

    assert [(t.txid, t.amount, t.address, block.height) for t, block in activity] == [
        (third, 3_000_000, str(watched), third_slot),
        (second, 2_000_000, str(watched), second_slot),
        (first, 1_000_000, str(watched), first_slot),
    ]
    assert [t.txid for t, _ in client.address_activity([str(watched)], second_slot)] == [third, second]


def test_node_errors_surface_as_node_error():
    with pytest.raises(NodeError):
        SolanaClient("http://127.0.0.1:9", timeout_s=1).tip()
    with pytest.raises(ValueError):
        SolanaClient("http://127.0.0.1:9", commitment="processed")
