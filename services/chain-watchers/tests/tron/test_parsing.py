"""TronClient's reading of node answers, on the shapes java-tron prints (visible=true)."""

import random

import pytest

from kernodeck_chains.addresses import tron_address_of
from kernodeck_chains.evm import TRANSFER_TOPIC
from kernodeck_watchers.chains.base import BlockRef, NodeError, SeenTransfer
from kernodeck_watchers.chains.tron import (
    TronClient,
    block_ref,
    block_transfers,
    keyed,
    trc20_transfers,
    trx_transfer,
)
from kernodeck_watchers.domain.watched import WatchedAddresses

pytestmark = pytest.mark.unit

W = tron_address_of(bytes.fromhex("ab" * 20))
TOKEN = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"  # mainnet USDT
TX = "11" * 32


def transfer_log(**changes) -> dict:
    entry = {
        "address": TOKEN,
        "topics": [TRANSFER_TOPIC, "0" * 24 + "01" * 20, "0" * 24 + "ab" * 20],
        "data": (10**6).to_bytes(32, "big").hex(),
    }
    return entry | changes


def test_transfer_logs_are_matched_by_position_with_their_contract():
    info = {"id": TX, "log": [transfer_log(topics=["00" * 32]), transfer_log()]}
    assert trc20_transfers(info, {W}) == [SeenTransfer(TX, 1, W, TOKEN, 10**6)]


def test_logs_that_are_not_trc20_transfers_are_ignored():
    sender, to = "0" * 24 + "01" * 20, "0" * 24 + "ab" * 20
    odd = [
        transfer_log(topics=[TRANSFER_TOPIC, sender, to, "0" * 63 + "7"], data=""),  # TRC-721: token id indexed
        transfer_log(topics=[TRANSFER_TOPIC, sender]),
        transfer_log(topics=["00" * 32, sender, to]),  # another event
        transfer_log(topics=[TRANSFER_TOPIC, sender, "ff" * 12 + "ab" * 20]),  # not an address
    ]
    assert trc20_transfers({"id": TX, "log": odd}, {W}) == []
    assert trc20_transfers({"id": TX}, {W}) == []  # no log at all: a TRX transfer's info


def test_a_zero_trc20_transfer_pays_nothing():
    zero, one = transfer_log(data="00" * 32), transfer_log(data="00" * 31 + "01")
    assert trc20_transfers({"id": TX, "log": [zero, one]}, {W}) == [SeenTransfer(TX, 1, W, TOKEN, 1)]


def tx(kind: str, value: dict, txid: str = TX, contract_ret: str = "SUCCESS") -> dict:
    contract = {"type": kind, "parameter": {"value": value}}
    return {"ret": [{"contractRet": contract_ret}], "txID": txid, "raw_data": {"contract": [contract]}}


def test_only_transfer_contracts_to_watched_addresses_are_trx_transfers():
    assert trx_transfer(tx("TransferContract", {"to_address": W, "amount": 5}), {W}) == SeenTransfer(TX, 0, W, None, 5)
    assert trx_transfer(tx("TransferContract", {"to_address": TOKEN, "amount": 5}), {W}) is None
    assert trx_transfer(tx("TransferAssetContract", {"to_address": W, "amount": 5}), {W}) is None  # TRC-10


def test_a_block_ref_reads_seconds_and_the_genesis_zero_fields():
    header = {"parentHash": "aa" * 32, "txTrieRoot": "00" * 32, "witness_address": W}
    genesis = block_ref({"blockID": "00" * 32, "block_header": {"raw_data": header}})
    assert (genesis.height, genesis.time) == (0, 0)
    later = block_ref(
        {"blockID": "bb" * 32, "block_header": {"raw_data": {**header, "number": 7, "timestamp": 1_700_000_003_999}}}
    )
    assert (later.height, later.hash, later.parent_hash, later.time) == (7, "bb" * 32, "aa" * 32, 1_700_000_003)


def test_only_successful_transactions_of_a_block_count():
    trx, token = "aa" * 32, "bb" * 32
    infos = [{"id": trx, "receipt": {"net_usage": 268}}, {"id": token, "log": [transfer_log()]}]

    def block(token_ret: str) -> dict:
        calls = tx("TriggerSmartContract", {"data": "a9059cbb"}, token, token_ret)
        return {"transactions": [tx("TransferContract", {"to_address": W, "amount": 9}, trx), calls]}

    trx_seen = SeenTransfer(trx, 0, W, None, 9)
    assert block_transfers(block("SUCCESS"), infos, {W}) == [trx_seen, SeenTransfer(token, 0, W, TOKEN, 10**6)]
    assert block_transfers(block("REVERT"), infos, {W}) == [trx_seen]
    assert block_transfers(block("OUT_OF_ENERGY"), infos, {W}) == [trx_seen]
    assert block_transfers({}, [], {W}) == []  # an empty block has no "transactions"


def test_infos_from_another_block_at_that_height_are_a_node_error(monkeypatch):
    """A node still serves an orphaned block by id while infos by number come from the new one."""
    client = TronClient("http://node.invalid")
    answers = {
        "getblockbyid": {"transactions": [tx("TransferContract", {"to_address": W, "amount": 9}, "aa" * 32)]},
        "gettransactioninfobyblocknum": [{"id": "cc" * 32}],
    }
    monkeypatch.setattr(client, "_post", lambda endpoint, body: answers[endpoint])
    with pytest.raises(NodeError):
        client.transfers_in_block(BlockRef(5, "dd" * 32, "ee" * 32, 0), {W})


def encoding_every_recipient(info: dict, watched: set[str]) -> list[SeenTransfer]:
    """The matching before account ids: every log's recipient encoded as T..., then looked up."""
    found = []
    for position, log in enumerate(info.get("log", [])):
        topics = log.get("topics", [])
        if len(topics) != 3 or topics[0] != TRANSFER_TOPIC or len(log.get("data", "")) != 64:
            continue
        if not topics[2].startswith("0" * 24):
            continue
        to = tron_address_of(bytes.fromhex(topics[2][-40:]))
        if to in watched and (amount := int(log["data"], 16)):
            found.append(SeenTransfer(info["id"], position, to, log["address"], amount))
    return found


def test_logs_matched_by_account_id_find_what_encoding_every_recipient_finds():
    rng = random.Random(16)
    ids = [rng.randbytes(20) for _ in range(400)]
    watched_ids = ids[::3]
    watched = WatchedAddresses(default_required=19, key=TronClient.match_key)
    for account in watched_ids:
        watched.add(tron_address_of(account), 19)
    watched.add("T" + "x" * 33, 19)  # text that is no Tron address: watched, never paid by a log
    watched.add("not base58 at all", 19)
    ended = tron_address_of(watched_ids[0])
    watched.discard(ended)
    infos = []
    for n in range(40):
        logs = []
        for account in rng.sample(ids, 12):
            spelled = account.hex().upper() if rng.random() < 0.3 else account.hex()  # hex digits in either case
            amount = rng.choice((0, 1, 10**6))
            logs.append(transfer_log(topics=[TRANSFER_TOPIC, "0" * 24 + "01" * 20, "0" * 24 + spelled]))
            logs[-1]["data"] = amount.to_bytes(32, "big").hex()
        logs.append(transfer_log(topics=[TRANSFER_TOPIC, "0" * 24 + "01" * 20, "ff" * 12 + watched_ids[1].hex()]))
        infos.append({"id": f"{n:064x}", "log": logs})
    plain = set(watched.addresses)
    found = [t for info in infos for t in trc20_transfers(info, watched.addresses)]
    assert found == [t for info in infos for t in encoding_every_recipient(info, plain)]
    assert found == [t for info in infos for t in trc20_transfers(info, plain)]  # a plain set: keyed on the way
    assert {t.address for t in found} <= plain - {ended} and len(found) > 20
    assert not any(t.address == ended for t in found)


def test_the_watched_set_keeps_account_ids_in_step_with_its_addresses():
    watched = keyed({W, "nonsense"})
    assert watched.keys == {int("ab" * 20, 16): W}
    watched.discard(W)
    watched.discard("never watched")
    assert watched.keys == {} and watched == {"nonsense"}
    assert trc20_transfers({"id": TX, "log": [transfer_log()]}, watched) == []
