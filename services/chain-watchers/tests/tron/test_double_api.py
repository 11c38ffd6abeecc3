"""The double answers with the full node's shapes: field names, hex and base58 addresses, solidified data."""

import hashlib
import json

import coincurve
import zmq

from kernodeck_chains.addresses import tron_hex_address
from kernodeck_chains.evm import TRANSFER_TOPIC


def sign(tx: dict, private_key: str) -> dict:
    """What a wallet does with an unsigned transaction: sign its txID, keep everything else."""
    key = coincurve.PrivateKey(bytes.fromhex(private_key.removeprefix("0x")))
    return {**tx, "signature": [key.sign_recoverable(bytes.fromhex(tx["txID"]), hasher=None).hex()]}


def word(value: int) -> str:
    return value.to_bytes(32, "big").hex()


def test_a_block_has_the_node_fields_with_hex_or_base58_addresses(double, new_address):
    to = new_address()
    txid = double.transfer(to, 7_000_000)
    [block_id] = double.mine(1)
    number = int(block_id[:16], 16)
    hidden = double.post("/wallet/getblockbynum", {"num": number})
    shown = double.post("/wallet/getblockbynum", {"num": number, "visible": True})

    assert hidden["blockID"] == shown["blockID"] == block_id
    raw = hidden["block_header"]["raw_data"]
    assert set(raw) == {"number", "txTrieRoot", "witness_address", "parentHash", "version", "timestamp"}
    assert raw["number"] == number and len(hidden["block_header"]["witness_signature"]) == 130
    assert raw["witness_address"].startswith("41") and len(raw["witness_address"]) == 42
    assert tron_hex_address(shown["block_header"]["raw_data"]["witness_address"]) == raw["witness_address"]

    [tx] = hidden["transactions"]
    assert set(tx) == {"ret", "signature", "txID", "raw_data", "raw_data_hex"}
    assert tx["txID"] == txid == hashlib.sha256(bytes.fromhex(tx["raw_data_hex"])).hexdigest()
    assert tx["ret"] == [{"contractRet": "SUCCESS"}]
    [contract] = tx["raw_data"]["contract"]
    assert contract["type"] == "TransferContract"
    assert contract["parameter"]["type_url"] == "type.googleapis.com/protocol.TransferContract"
    value = contract["parameter"]["value"]
    assert value == {
        "owner_address": tron_hex_address(double.accounts[0]),
        "to_address": tron_hex_address(to),
        "amount": 7_000_000,
    }
    assert shown["transactions"][0]["raw_data"]["contract"][0]["parameter"]["value"] == {
        "owner_address": double.accounts[0],
        "to_address": to,
        "amount": 7_000_000,
    }


def test_the_genesis_block_has_no_number_and_an_empty_block_no_transactions(double):
    genesis = double.post("/wallet/getblockbynum", {"num": 0})
    assert "number" not in genesis["block_header"]["raw_data"] and genesis["blockID"].startswith("0" * 16)
    [block_id] = double.mine(1)
    assert "transactions" not in double.post("/wallet/getblockbyid", {"value": block_id})


def test_a_trc20_transfer_info_has_its_log_as_the_node_prints_it(double, usdt, new_address):
    to = new_address()
    txid = double.trc20_transfer(usdt, to, 12_340_000)
    double.mine(1)
    info = double.post("/wallet/gettransactioninfobyid", {"value": txid})
    shown = double.post("/wallet/gettransactioninfobyid", {"value": txid, "visible": True})

    assert info["id"] == txid and "result" not in info  # success leaves the field out
    assert info["receipt"]["result"] == "SUCCESS" and info["receipt"]["energy_usage_total"] > 0
    assert info["contract_address"] == tron_hex_address(usdt) and shown["contract_address"] == usdt
    assert info["contractResult"] == [word(1)]  # transfer returned true
    [log] = info["log"]
    assert log["address"] == tron_hex_address(usdt)[2:]  # the EVM's 20 bytes, without 41
    sender = tron_hex_address(double.accounts[0])[2:]
    assert log["topics"] == [TRANSFER_TOPIC, "0" * 24 + sender, "0" * 24 + tron_hex_address(to)[2:]]
    assert log["data"] == word(12_340_000)
    assert shown["log"][0]["address"] == usdt and shown["log"][0]["topics"] == log["topics"]
    assert shown["blockNumber"] == info["blockNumber"] and isinstance(info["blockTimeStamp"], int)


def test_a_trc20_transfer_over_the_balance_is_mined_as_a_revert(double, usdt, new_address):
    txid = double.trc20_transfer(usdt, new_address(), 1, sender=double.accounts[4])  # holds no USDT
    double.mine(1)
    tx = double.post("/wallet/gettransactionbyid", {"value": txid})
    info = double.post("/wallet/gettransactioninfobyid", {"value": txid})
    shown = double.post("/wallet/gettransactioninfobyid", {"value": txid, "visible": True})

    assert tx["ret"] == [{"contractRet": "REVERT"}]
    assert info["result"] == "FAILED" and info["receipt"]["result"] == "REVERT" and "log" not in info
    assert bytes.fromhex(info["resMessage"]) == b"REVERT opcode executed"
    assert shown["resMessage"] == "REVERT opcode executed"


def test_walletsolidity_shows_a_block_only_once_it_is_solidified(double, new_address):
    txid = double.transfer(new_address(), 1_000_000)
    [block_id] = double.mine(1)
    number = int(block_id[:16], 16)
    solid_tip = double.post("/walletsolidity/getnowblock")["block_header"]["raw_data"]["number"]

    assert solid_tip == number - double.solidify_after
    assert double.post("/walletsolidity/getblockbynum", {"num": number}) == {}
    assert double.post("/walletsolidity/getblockbyid", {"value": block_id}) == {}
    assert double.post("/walletsolidity/gettransactionbyid", {"value": txid}) == {}
    assert double.post("/walletsolidity/gettransactioninfobyid", {"value": txid}) == {}
    assert double.post("/walletsolidity/gettransactioninfobyblocknum", {"num": number}) == []

    double.mine(double.solidify_after)
    for endpoint, body in [
        ("getblockbynum", {"num": number}),
        ("gettransactioninfobyid", {"value": txid}),
        ("gettransactioninfobyblocknum", {"num": number}),
    ]:
        assert double.post(f"/walletsolidity/{endpoint}", body) == double.post(f"/wallet/{endpoint}", body) != {}


def test_getaccount_shows_the_balance_of_latest_and_solidified_state(double, new_address):
    to = new_address()
    assert double.post("/wallet/getaccount", {"address": to, "visible": True}) == {}
    double.transfer(to, 3_000_000)
    double.mine(1)

    assert double.post("/wallet/getaccount", {"address": to, "visible": True}) == {"address": to, "balance": 3_000_000}
    hex_form = tron_hex_address(to)
    assert double.post("/wallet/getaccount", {"address": hex_form}) == {"address": hex_form, "balance": 3_000_000}
    assert double.post("/walletsolidity/getaccount", {"address": to, "visible": True}) == {}
    double.mine(double.solidify_after)
    assert double.post("/walletsolidity/getaccount", {"address": to, "visible": True})["balance"] == 3_000_000


def test_an_address_in_the_other_spelling_than_visible_is_an_error(double, new_address):
    answer = double.post("/wallet/getaccount", {"address": new_address()})  # base58, visible false
    assert answer["Error"].startswith("class java.lang.IllegalArgumentException : ")


def test_what_is_not_found_is_an_empty_object(double):
    assert double.post("/wallet/getblockbynum", {"num": 10**9}) == {}
    assert double.post("/wallet/getblockbyid", {"value": "ff" * 32}) == {}
    assert double.post("/wallet/gettransactionbyid", {"value": "ab" * 32}) == {}
    assert double.post("/wallet/gettransactioninfobyid", {"value": "ab" * 32}) == {}
    assert double.post("/wallet/gettransactioninfobyblocknum", {"num": 0}) == {}


def test_a_wallet_pays_with_createtransaction_and_broadcasttransaction(double, new_account, new_address):
    payer, key = new_account()
    double.transfer(payer, 50_000_000)
    double.mine(1)
    to = new_address()
    unsigned = double.post(
        "/wallet/createtransaction", {"owner_address": payer, "to_address": to, "amount": 20_000_000, "visible": True}
    )
    assert unsigned["visible"] is True and unsigned["raw_data"]["contract"][0]["parameter"]["value"]["to_address"] == to

    answer = double.post("/wallet/broadcasttransaction", sign(unsigned, key))
    assert answer == {"result": True, "txid": unsigned["txID"]}
    double.mine(1)
    mined = double.post("/wallet/gettransactionbyid", {"value": unsigned["txID"], "visible": True})
    assert mined["ret"] == [{"contractRet": "SUCCESS"}] and mined["signature"] == sign(unsigned, key)["signature"]
    assert double.post("/wallet/getaccount", {"address": to, "visible": True})["balance"] == 20_000_000


def test_a_wallet_pays_usdt_with_triggersmartcontract(double, usdt, new_address):
    to = new_address()
    unsigned = double.post(
        "/wallet/triggersmartcontract",
        {
            "owner_address": tron_hex_address(double.accounts[0]),
            "contract_address": tron_hex_address(usdt),
            "function_selector": "transfer(address,uint256)",
            "parameter": "0" * 24 + tron_hex_address(to)[2:] + word(9_000_000),
            "fee_limit": 100_000_000,
        },
    )
    assert unsigned["result"] == {"result": True}
    tx = unsigned["transaction"]
    assert tx["visible"] is False and tx["raw_data"]["fee_limit"] == 100_000_000
    assert tx["raw_data"]["contract"][0]["type"] == "TriggerSmartContract"
    assert tx["raw_data"]["contract"][0]["parameter"]["value"]["data"].startswith("a9059cbb")

    assert double.post("/wallet/broadcasttransaction", sign(tx, double.private_keys[0]))["result"] is True
    double.mine(1)
    info = double.post("/wallet/gettransactioninfobyid", {"value": tx["txID"], "visible": True})
    assert info["log"][0]["address"] == usdt and info["log"][0]["data"] == word(9_000_000)


def test_broadcast_refuses_a_foreign_signature_a_duplicate_and_an_overdraft(double, new_account, new_address):
    payer, key = new_account()
    body = {"owner_address": double.accounts[0], "to_address": new_address(), "amount": 1, "visible": True}
    unsigned = double.post("/wallet/createtransaction", body)

    refused = double.post("/wallet/broadcasttransaction", sign(unsigned, key))
    assert refused["code"] == "SIGERROR" and refused["txid"] == unsigned["txID"]
    signed = sign(unsigned, double.private_keys[0])
    assert double.post("/wallet/broadcasttransaction", signed)["result"] is True
    assert double.post("/wallet/broadcasttransaction", signed)["code"] == "DUP_TRANSACTION_ERROR"

    overdraft = {"owner_address": payer, "to_address": new_address(), "amount": 1, "visible": True}
    assert "balance is not sufficient" in double.post("/wallet/createtransaction", overdraft)["Error"]


def test_each_new_block_goes_out_on_the_message_queue_as_a_block_trigger(double, new_address):
    subscriber = zmq.Context().socket(zmq.SUB)
    subscriber.setsockopt(zmq.SUBSCRIBE, b"block")
    subscriber.setsockopt(zmq.RCVTIMEO, 5000)
    subscriber.connect(double.events_url)
    try:
        while True:  # a PUB socket drops what it sends before the subscription reaches it
            double.mine(1)
            if subscriber.poll(200):
                subscriber.recv_multipart()
                break
        txid = double.transfer(new_address(), 1_000)
        [block_id] = double.mine(1)
        topic, body = subscriber.recv_multipart()
    finally:
        subscriber.close(linger=0)
    trigger = json.loads(body)
    block = double.post("/wallet/getblockbyid", {"value": block_id})
    assert topic == b"block"
    assert trigger == {
        "timeStamp": block["block_header"]["raw_data"]["timestamp"],
        "triggerName": "blockTrigger",
        "blockNumber": block["block_header"]["raw_data"]["number"],
        "blockHash": block_id,
        "transactionSize": 1,
        "latestSolidifiedBlockNumber": block["block_header"]["raw_data"]["number"] - double.solidify_after,
        "transactionList": [txid],
    }
