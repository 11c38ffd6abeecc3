"""TronClient against the double: what a watcher finds in blocks."""

import pytest

from infra.devnet.fault_proxy import FaultProxy
from infra.devnet.tokens import call_data, compile_contracts
from infra.devnet.tron_double.addresses import to_evm
from kernodeck_watchers.chains.base import NodeError, SeenTransfer
from kernodeck_watchers.chains.tron import TronClient


def found_in_new_block(double, client, watched):
    """Mine one block, check it is the client's tip, and return what the client finds in it."""
    [block_id] = double.mine(1)
    tip = client.tip()
    assert tip.hash == block_id
    return sorted(client.transfers_in_block(tip, watched), key=lambda t: t.txid)


def test_trx_and_usdt_to_watched_addresses_are_found_with_exact_amounts(double, latest, usdt, new_address):
    trx_to, usdt_to = new_address(), new_address()
    trx = double.transfer(trx_to, 1_234_567)
    token = double.trc20_transfer(usdt, usdt_to, 25_000_001)
    expected = [SeenTransfer(trx, 0, trx_to, None, 1_234_567), SeenTransfer(token, 0, usdt_to, usdt, 25_000_001)]

    assert found_in_new_block(double, latest, {trx_to, usdt_to}) == sorted(expected, key=lambda t: t.txid)


def test_transfers_to_unwatched_addresses_are_ignored(double, latest, usdt, new_address):
    watched = new_address()
    double.transfer(new_address(), 5_000_000)
    double.trc20_transfer(usdt, new_address(), 5_000_000)
    wanted = double.transfer(watched, 6_000_000)

    assert found_in_new_block(double, latest, {watched}) == [SeenTransfer(wanted, 0, watched, None, 6_000_000)]


def test_a_token_with_the_usdt_symbol_at_another_contract_is_reported_with_its_contract(
    double, latest, usdt, fake_usdt, new_address
):
    to = new_address()
    txid = double.trc20_transfer(fake_usdt, to, 10_000_000)

    [transfer] = found_in_new_block(double, latest, {to})
    assert transfer == SeenTransfer(txid, 0, to, fake_usdt, 10_000_000) and transfer.token != usdt


def test_a_failed_trc20_transfer_is_not_reported(double, latest, usdt, new_address):
    to = new_address()
    failed = double.trc20_transfer(usdt, to, 1_000_000, sender=double.accounts[5])  # holds no USDT

    assert found_in_new_block(double, latest, {to}) == []
    assert double.post("/wallet/gettransactionbyid", {"value": failed})["ret"] == [{"contractRet": "REVERT"}]


def test_the_tip_is_read_without_the_head_blocks_transactions(double, latest, new_address):
    double.transfer(new_address(), 1_000_000)
    double.mine(1)
    with FaultProxy(double.url) as proxy:
        tip = TronClient(proxy.url, api_key="k-123").tip()
        ((_, path, body),) = proxy.requests
    head = latest.block(tip.height)
    assert tip == head and head.payload["transactions"]  # the same block, whose transactions were not sent
    assert (path, body) == ("/wallet/getblock", {"detail": False, "visible": True})
    sent = {name.lower(): value for name, value in proxy.headers[0].items()}
    assert sent["tron-pro-api-key"] == "k-123"  # a provider's key, in the header providers read


def test_block_refs_chain_by_parent_hash(double, latest):
    double.mine(2)
    tip = latest.tip()
    parent = latest.block(tip.height - 1)
    assert tip.parent_hash == parent.hash and tip.time >= parent.time > 0
    genesis = latest.block(0)
    assert genesis.height == 0 and genesis.time == 0


def test_a_reorg_changes_the_block_id_and_drops_the_transaction(double, latest, new_address):
    dropped_to, kept_to = new_address(), new_address()
    dropped = double.transfer(dropped_to, 2_000_000)
    kept = double.transfer(kept_to, 4_000_000)
    [block_id] = double.mine(1)
    before = latest.tip()
    assert len(latest.transfers_in_block(before, {dropped_to, kept_to})) == 2

    [new_id] = double.reorg(1, drop=(dropped,))
    after = latest.block(before.height)
    assert after.hash == new_id != block_id and after.parent_hash == before.parent_hash
    assert latest.transfers_in_block(after, {dropped_to, kept_to}) == [SeenTransfer(kept, 0, kept_to, None, 4_000_000)]
    with pytest.raises(NodeError):
        latest.transfers_in_block(before, {dropped_to})  # the orphaned block is gone
    # The EVM state went back too: the dropped TRX never arrived.
    assert double.post("/wallet/getaccount", {"address": dropped_to, "visible": True}) == {}


def test_a_reorg_cannot_replace_solidified_blocks(double):
    double.mine(double.solidify_after + 1)
    with pytest.raises(Exception, match="unsolidified"):
        double.reorg(double.solidify_after + 1)


def test_address_activity_reports_transfers_with_their_blocks(double, latest, usdt, new_address):
    to = new_address()
    first = double.transfer(to, 1_000_000)
    double.mine(1)
    since = latest.tip().height
    second = double.trc20_transfer(usdt, to, 2_000_000)
    double.mine(2)

    assert latest.address_activity([to], since) == [
        (SeenTransfer(first, 0, to, None, 1_000_000), latest.block(since)),
        (SeenTransfer(second, 0, to, usdt, 2_000_000), latest.block(since + 1)),
    ]
    assert latest.address_activity([to], since + 1) == [
        (SeenTransfer(second, 0, to, usdt, 2_000_000), latest.block(since + 1))
    ]
    assert latest.pending_transfers({to}) == []


def test_an_unreachable_node_and_a_missing_block_are_node_errors(double, latest):
    with pytest.raises(NodeError):
        TronClient("http://127.0.0.1:9", timeout_s=2).tip()
    with pytest.raises(NodeError):
        latest.block(latest.tip().height + 1)


@pytest.fixture(scope="module")
def forwarder(double):
    """A contract that sends the TRX it is paid on in an internal call (as exchange wallets pay out)."""
    return double.deploy(compile_contracts()["Forwarder"]["bytecode"], "Forwarder")


def test_trx_sent_by_a_contract_is_read_from_the_internal_transactions(double, latest, forwarder, new_address):
    watched = new_address()
    paid = double.call(forwarder, call_data("forward(address)", to_evm(watched)), call_value=3_000_000)
    undone = double.call(
        forwarder, call_data("forwardThenRevert(address)", to_evm(watched)), call_value=5_000_000
    )  # the transaction fails: its internal transfer is rejected with it

    found = found_in_new_block(double, latest, {watched})

    assert found == [SeenTransfer(paid, -1, watched, None, 3_000_000)]
    (info,) = [
        i
        for i in double.post("/wallet/gettransactioninfobyblocknum", {"num": latest.tip().height, "visible": True})
        if i["id"] == undone
    ]
    assert info["internal_transactions"][0]["rejected"] is True
    assert latest.unseen == frozenset()
