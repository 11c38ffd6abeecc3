"""The Bitcoin/Litecoin client against the real node, and its parsing of the node's JSON."""

from decimal import Decimal

import pytest

from kernodeck_watchers import metrics
from kernodeck_watchers.chains.base import NodeError, SeenTransfer
from kernodeck_watchers.chains.jsonrpc import JsonRpc
from kernodeck_watchers.chains.utxo import UtxoClient, match, to_base_units

from .conftest import coins


@pytest.fixture
def client(node) -> UtxoClient:
    raw = node.node
    return UtxoClient(node.network, JsonRpc(raw.rpc_url, 10, user=raw.rpcuser, password=raw.rpcpassword, version="1.0"))


def test_amounts_become_base_units_exactly():
    assert to_base_units(Decimal("0.00000001")) == 1
    assert to_base_units(Decimal("20999999.99999999")) == 2_099_999_999_999_999
    assert to_base_units(Decimal("50.00000000")) == 50 * 10**8
    assert to_base_units(0) == 0
    with pytest.raises(ValueError):
        to_base_units(Decimal("0.000000001"))


def test_outputs_match_by_address_in_both_json_shapes():
    txs = [
        {
            "txid": "t1",
            "vout": [
                {"n": 0, "value": Decimal("0.1"), "scriptPubKey": {"address": "bcrt1qa"}},  # Bitcoin Core >= 22
                {"n": 1, "value": Decimal("0.2"), "scriptPubKey": {"addresses": ["rltc1qb"]}},  # Litecoin Core 0.21
                {"n": 2, "value": Decimal("0.3"), "scriptPubKey": {"addresses": ["rltc1qb", "x"]}},  # bare multisig
                {"n": 3, "value": Decimal("0"), "scriptPubKey": {"type": "nulldata"}},
            ],
        }
    ]
    assert match(txs, {"bcrt1qa", "rltc1qb", "x"}, "litecoin") == [
        SeenTransfer("t1", 0, "bcrt1qa", None, 10_000_000),
        SeenTransfer("t1", 1, "rltc1qb", None, 20_000_000),
    ]


def test_one_transaction_of_an_unknown_shape_is_skipped_not_the_block():
    txs = [
        {"txid": "odd", "vout": [{"n": 0, "value": "not a number", "scriptPubKey": {"address": "rltc1qb"}}]},
        {"txid": "t2", "vout": [{"n": 0, "value": Decimal("0.1"), "scriptPubKey": {"address": "rltc1qb"}}]},
    ]
    before = metrics.UNREADABLE_TRANSACTIONS.labels("litecoin")._value.get()
    assert match(txs, {"rltc1qb"}, "litecoin") == [SeenTransfer("t2", 0, "rltc1qb", None, 10_000_000)]
    assert metrics.UNREADABLE_TRANSACTIONS.labels("litecoin")._value.get() == before + 1


def test_only_a_watched_outputs_amount_is_read():
    txs = [
        {
            "txid": "t1",
            "vout": [
                {"n": 0, "value": "not a number", "scriptPubKey": {"address": "bcrt1qother"}},  # not ours: not read
                {"n": 1, "value": Decimal("0.5"), "scriptPubKey": {"address": "bcrt1qa"}},
            ],
        },
        {"txid": "t2", "vout": [{"ismweb": True, "output_id": "ab" * 32}]},  # MWEB: nothing to read
    ]
    assert match(txs, {"bcrt1qa", "ab" * 32}, "bitcoin") == [SeenTransfer("t1", 1, "bcrt1qa", None, 50_000_000)]


# Every form of address each node's wallet makes (Litecoin Core 0.21 has no taproot wallet).
WALLET_FORMS = {
    "bitcoin": ("legacy", "p2sh-segwit", "bech32", "bech32m"),
    "litecoin": ("legacy", "p2sh-segwit", "bech32"),
}


def every_address_form(node) -> list[str]:
    """P2PKH, P2SH, P2WPKH and (Bitcoin) P2TR from the wallet, and a P2WSH: a 1-of-1 multisig's witness script."""
    addresses = [node.rpc("getnewaddress", "", form) for form in WALLET_FORMS[node.network]]
    pubkey = node.rpc("getaddressinfo", node.new_address())["pubkey"]
    return [*addresses, node.rpc("createmultisig", 1, [pubkey], "bech32")["address"]]


def test_every_address_form_is_matched_and_no_other(client, node):
    watched, others = every_address_form(node), every_address_form(node)
    txid = node.rpc("sendmany", "", {address: coins(10_000 + i) for i, address in enumerate(watched + others)})
    node.mine(1)
    found = client.transfers_in_block(client.block(node.height()), set(watched))
    assert sorted(found, key=lambda seen: seen.amount) == [
        SeenTransfer(txid, node.output_index(txid, address), address, None, 10_000 + i)
        for i, address in enumerate(watched)
    ]


def test_bech32_is_matched_in_lower_case_and_base58_as_it_is(client, node):
    address = node.new_address()
    assert client.normalize(address.upper()) == address
    assert client.normalize(f" {address} ") == address
    legacy = node.rpc("getnewaddress", "", "legacy")
    assert client.normalize(legacy) == legacy
    assert client.normalize(legacy.lower()) == legacy.lower()  # another address, not this one


def test_a_payment_in_the_mempool_then_in_its_block(client, node):
    address = node.new_address()
    txid = node.pay(address, 12_345_678)
    index = node.output_index(txid, address)
    pending = client.pending_transfers({address})
    assert pending == [SeenTransfer(txid, index, address, None, 12_345_678)]
    (block_hash,) = node.mine(1)
    assert client.pending_transfers({address}) == []
    tip = client.tip()
    assert (tip.hash, tip.height) == (block_hash, node.height())
    assert client.block(tip.height) == tip
    assert client.block(tip.height - 1).hash == tip.parent_hash
    assert client.transfers_in_block(tip, {address}) == pending
    assert client.transfers_in_block(tip, {"someone-else"}) == []


def test_address_activity_reports_the_mempool_and_recent_blocks(client, node):
    address = node.new_address()
    mined = node.pay(address, 100_000)
    node.mine(1)
    mined_at = node.height()
    node.mine(2)
    pending = node.pay(address, 200_000)
    found = client.address_activity([address.upper()], mined_at)
    assert sorted((seen.txid, seen.amount, block) for seen, block in found) == sorted(
        [(mined, 100_000, client.block(mined_at)), (pending, 200_000, None)]
    )
    assert [seen.txid for seen, _ in client.address_activity([address], mined_at + 1)] == [pending]
    node.mine(1)


def test_the_mempool_cache_forgets_what_left(client, node):
    address = node.new_address()
    node.pay(address, 500_000)
    client.pending_transfers({address})
    assert client._mempool
    node.mine(1)
    client.pending_transfers({address})
    assert client._mempool == {}


def test_node_errors_are_node_errors(node):
    raw = node.node
    wrong_password = UtxoClient(
        node.network, JsonRpc(raw.rpc_url, 5, user=raw.rpcuser, password="wrong", version="1.0")
    )
    with pytest.raises(NodeError, match="HTTP 401"):
        wrong_password.tip()
    nobody = UtxoClient(node.network, JsonRpc("http://127.0.0.1:9", 5, user="u", password="p", version="1.0"))
    with pytest.raises(NodeError, match="cannot be reached"):
        nobody.tip()
    right = UtxoClient(node.network, JsonRpc(raw.rpc_url, 5, user=raw.rpcuser, password=raw.rpcpassword, version="1.0"))
    with pytest.raises(NodeError, match="out of range"):
        right.block(10**7)


def test_balances_come_from_the_utxo_set(client, node):
    paid, empty = node.new_address(), node.new_address()
    node.pay(paid, 12_345)
    node.mine(1)
    assert client.balances([paid, empty], node.height()) == {paid: 12_345, empty: 0}
