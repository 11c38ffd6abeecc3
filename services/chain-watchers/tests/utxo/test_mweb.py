"""The Litecoin watcher on a real litecoind with MWEB activated, as on Litecoin mainnet since 2022.

MWEB transactions and peg-ins print outputs with `ismweb` and an `output_id`
only (no `n`, `value` or `scriptPubKey`); a peg-out shows under its kernel in
the mempool and, once mined, as an ordinary output of the block's HogEx
transaction. None of it may stop the watcher.
"""

import pytest

from infra.devnet.nodes import LitecoinNode
from kernodeck_watchers.chains.base import SeenTransfer
from kernodeck_watchers.chains.jsonrpc import JsonRpc
from kernodeck_watchers.chains.utxo import UtxoClient

from .conftest import RegtestNode

AMOUNT = 421_000


@pytest.fixture(scope="module")
def mweb_litecoin(tmp_path_factory):
    if not LitecoinNode.installed():
        pytest.skip(f"litecoin node is not installed: run {LitecoinNode.install_hint}")
    node = LitecoinNode(tmp_path_factory.mktemp("litecoin-mweb"), blocks=200)
    node.start()
    node.activate_mweb()
    node.rpc("createwallet", "mweb-only")  # a wallet holding MWEB coins only, to pay by peg-out
    node.rpc("sendtoaddress", node.rpc("getnewaddress", "", "mweb", wallet="mweb-only"), "5")
    node.mine(1)
    yield RegtestNode("litecoin", node)
    node.stop()


@pytest.fixture
def node(mweb_litecoin):
    return mweb_litecoin


def peg_in(node: RegtestNode) -> str:
    """A peg-in larger than the wallet's MWEB coins, left waiting in the mempool; its txid."""
    return node.rpc("sendtoaddress", node.rpc("getnewaddress", "", "mweb"), "30")


def mweb_transfer(node: RegtestNode) -> str:
    """MWEB to MWEB (its outputs carry nothing but `output_id`)."""
    return node.node.rpc("sendtoaddress", node.rpc("getnewaddress", "", "mweb"), "0.1", wallet="mweb-only")


def test_the_client_reads_mweb_transactions_and_ignores_what_cannot_pay_an_address(node):
    raw = node.node
    client = UtxoClient("litecoin", JsonRpc(raw.rpc_url, 10, user=raw.rpcuser, password=raw.rpcpassword, version="1.0"))
    pegin, private = peg_in(node), mweb_transfer(node)
    address = node.new_address()
    txid = node.pay(address, AMOUNT)
    assert {pegin, private, txid} <= set(node.rpc("getrawmempool"))
    paid = SeenTransfer(txid, node.output_index(txid, address), address, None, AMOUNT)
    assert client.pending_transfers({address}) == [paid]
    (block_hash,) = node.mine(1)
    block = client.block(node.height())
    assert block.hash == block_hash
    assert client.transfers_in_block(block, {address}) == [paid]


def test_a_payment_is_seen_and_confirmed_while_a_peg_in_waits_in_the_mempool(node, watching, tap):
    peg_in(node)
    mweb_transfer(node)
    address = watching(node)
    txid = node.pay(address, AMOUNT)
    tap.wait_for("transfer_seen", txid=txid, block_height=None)
    node.mine(2)
    assert tap.wait_for("transfer_confirmed", txid=txid, confirmations=2)["amount"] == AMOUNT


def test_a_peg_out_to_a_watched_address_is_seen_in_the_block_that_mines_it(node, watching, tap):
    address = watching(node)
    node.node.rpc("sendtoaddress", address, "0.25", wallet="mweb-only")  # MWEB coins only: a peg-out
    (block_hash,) = node.mine(1)
    seen = tap.wait_for("transfer_seen", address=address)
    assert (seen["block_hash"], seen["amount"]) == (block_hash, 25_000_000)
    hogex = node.rpc("getblock", block_hash)["tx"][-1]  # the HogEx transaction closes the block
    assert seen["txid"] == hogex
