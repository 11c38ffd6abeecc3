"""The double answers as agave does: results parse with solders' typed RPC responses (the Rust
solana-rpc-client-api types), field names as on mainnet, agave's error codes."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest
import websocket
from solders.hash import Hash
from solders.keypair import Keypair
from solders.rpc.responses import (
    GetBalanceResp,
    GetBlockResp,
    GetLatestBlockhashResp,
    GetSignaturesForAddressResp,
    GetSignatureStatusesResp,
    GetTransactionResp,
)

from infra.devnet.solana_double import RpcError, SolanaDouble
from infra.devnet.solana_double.base58 import b58encode
from infra.devnet.solana_double.ledger import LAMPORTS_PER_SOL, MAX_PROCESSING_AGE
from infra.devnet.solana_double.wallet import Wallet, system_transfer

FEE = 5000  # lamports per signature


def typed(response_type, result):
    """Parse a result with solders' own type for the method's response; fails on a missing or mistyped field."""
    parsed = response_type.from_json(json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}))
    assert isinstance(parsed, response_type), parsed
    return parsed


def post(node, body: bytes):
    request = urllib.request.Request(node.url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def refusal(wallet: Wallet, tx) -> RpcError:
    with pytest.raises(RpcError) as raised:
        wallet.send(tx)
    return raised.value


def rpc_error(node, method, *params) -> RpcError:
    with pytest.raises(RpcError) as raised:
        node.rpc(method, *params)
    return raised.value


def test_get_block_has_agave_fields_and_balances(node, wallet, payer):
    to = Keypair().pubkey()
    signature = wallet.transfer(payer, to, 2_000_000)
    slot = node.rpc("double_produceBlocks", 2) - 1
    config = {"encoding": "json", "transactionDetails": "full", "rewards": False, "commitment": "confirmed"}

    block = node.rpc("getBlock", slot, {**config, "maxSupportedTransactionVersion": 0})

    typed(GetBlockResp, block)
    previous = node.rpc("getBlock", slot - 1, {"commitment": "confirmed"})
    assert set(block) == {"blockHeight", "blockTime", "blockhash", "parentSlot", "previousBlockhash", "transactions"}
    assert (block["parentSlot"], block["previousBlockhash"]) == (slot - 1, previous["blockhash"])
    assert block["blockHeight"] == previous["blockHeight"] + 1
    assert abs(block["blockTime"] - time.time()) < 60
    [item] = block["transactions"]
    assert item["version"] == "legacy"
    message, meta = item["transaction"]["message"], item["meta"]
    assert item["transaction"]["signatures"] == [signature]
    assert message["accountKeys"] == [str(payer.pubkey()), str(to), "11111111111111111111111111111111"]
    assert set(message) == {"accountKeys", "header", "instructions", "recentBlockhash"}
    assert meta["err"] is None and meta["status"] == {"Ok": None}
    assert meta["fee"] == FEE
    assert meta["postBalances"][0] == meta["preBalances"][0] - 2_000_000 - FEE
    assert (meta["preBalances"][1], meta["postBalances"][1]) == (0, 2_000_000)
    assert {"innerInstructions", "logMessages", "loadedAddresses", "computeUnitsConsumed"} <= set(meta)
    assert node.rpc("getBlock", slot, {**config, "transactionDetails": "none"}).keys() == {
        "blockHeight",
        "blockTime",
        "blockhash",
        "parentSlot",
        "previousBlockhash",
    }
    assert node.rpc("getBlock", slot, {**config, "transactionDetails": "signatures"})["signatures"] == [signature]


def test_get_transaction_and_signatures_for_address_have_agave_fields(node, wallet, payer):
    to = Keypair().pubkey()
    signatures = [wallet.transfer(payer, to, lamports) for lamports in (1_000_000, 2_000_000)]
    node.rpc("double_produceBlocks", 1)
    signatures.append(wallet.transfer(payer, to, 3_000_000))
    slot = node.rpc("double_produceBlocks", 2) - 1

    tx = node.rpc("getTransaction", signatures[2], {"encoding": "json", "commitment": "confirmed"})
    typed(GetTransactionResp, tx)
    assert {"slot", "blockTime", "transaction", "meta"} == set(tx)
    assert tx["slot"] == slot
    assert tx["meta"]["postBalances"][1] - tx["meta"]["preBalances"][1] == 3_000_000
    assert node.rpc("getTransaction", signatures[2]) is None  # finalized by default: not yet

    listed = node.rpc("getSignaturesForAddress", str(to), {"commitment": "confirmed"})
    typed(GetSignaturesForAddressResp, listed)
    assert set(listed[0]) == {"signature", "slot", "err", "memo", "blockTime", "confirmationStatus"}
    assert [e["signature"] for e in listed] == [signatures[2], signatures[1], signatures[0]]  # newest first
    assert [e["confirmationStatus"] for e in listed] == ["confirmed", "confirmed", "confirmed"]

    page = node.rpc("getSignaturesForAddress", str(to), {"commitment": "confirmed", "before": signatures[2]})
    assert [e["signature"] for e in page] == [signatures[1], signatures[0]]
    page = node.rpc("getSignaturesForAddress", str(to), {"commitment": "confirmed", "until": signatures[0]})
    assert [e["signature"] for e in page] == [signatures[2], signatures[1]]
    page = node.rpc("getSignaturesForAddress", str(to), {"commitment": "confirmed", "limit": 1})
    assert [e["signature"] for e in page] == [signatures[2]]


def test_commitment_levels_trail_the_newest_block(node, wallet, payer):
    to = Keypair().pubkey()
    signature = wallet.transfer(payer, to, 4_000_000)
    slot = node.rpc("double_produceBlocks", 1)

    def view(commitment):
        balance = node.rpc("getBalance", str(to), {"commitment": commitment})
        typed(GetBalanceResp, balance)
        return node.rpc("getSlot", {"commitment": commitment}), balance["value"]

    def status():
        statuses = node.rpc("getSignatureStatuses", [signature])
        typed(GetSignatureStatusesResp, statuses)
        return statuses["value"][0]["confirmationStatus"], statuses["value"][0]["confirmations"]

    assert view("processed") == (slot, 4_000_000)
    assert view("confirmed") == (slot - 1, 0)
    assert status() == ("processed", 0)
    node.rpc("double_produceBlocks", 1)
    assert view("confirmed") == (slot, 4_000_000)
    assert view("finalized")[1] == 0
    assert status() == ("confirmed", 1)
    node.rpc("double_produceBlocks", 30)
    assert view("finalized") == (slot, 4_000_000)
    assert status() == ("finalized", None)
    assert node.rpc("getBlockHeight", {"commitment": "finalized"}) == node.rpc("getBlock", slot)["blockHeight"]

    error = rpc_error(node, "getBlock", slot, {"commitment": "processed"})
    assert (error.code, error.message) == (-32602, "Method does not support commitment below `confirmed`")


def test_skipped_and_future_slots_answer_agave_errors(node):
    node.rpc("double_skipSlots", 2)  # slots 1 and 2
    node.rpc("double_produceBlocks", 32)  # slots 3..34
    node.rpc("double_skipSlots", 1)  # slot 35
    newest = node.rpc("double_produceBlocks", 2)  # 36, 37: 35 blocks, the finalized one 31 blocks back
    assert node.rpc("getSlot") == 5  # finalized by default

    assert node.rpc("getBlocks", 0, newest, {"commitment": "confirmed"}) == [0, *range(3, 35), newest - 1]
    assert node.rpc("getBlocks", 0, 10) == [0, 3, 4, 5]
    assert node.rpc("getBlocksWithLimit", 1, 2, {"commitment": "confirmed"}) == [3, 4]
    assert node.rpc("getBlock", 3)["parentSlot"] == 0
    skipped = rpc_error(node, "getBlock", 1)
    assert (skipped.code, skipped.message) == (
        -32007,
        "Slot 1 was skipped, or missing due to ledger jump to recent snapshot",
    )
    assert rpc_error(node, "getBlock", 35, {"commitment": "confirmed"}).code == -32004  # skipped, above the root
    assert rpc_error(node, "getBlock", newest, {"commitment": "confirmed"}).code == -32004  # not confirmed yet
    assert rpc_error(node, "getBlock", newest + 5, {"commitment": "confirmed"}).code == -32004


def test_latest_blockhash_is_valid_for_150_blocks(node, wallet, payer):
    latest = node.rpc("getLatestBlockhash", {"commitment": "processed"})
    typed(GetLatestBlockhashResp, latest)
    height = node.rpc("getBlockHeight", {"commitment": "processed"})
    assert latest["value"]["lastValidBlockHeight"] == height + MAX_PROCESSING_AGE
    tx = system_transfer(payer, Keypair().pubkey(), 1_000_000, Hash.from_string(latest["value"]["blockhash"]))

    node.rpc("double_produceBlocks", MAX_PROCESSING_AGE + 1)

    error = refusal(wallet, tx)
    assert (error.code, error.message) == (-32002, "Transaction simulation failed: Blockhash not found")
    assert error.data["err"] == "BlockhashNotFound"


def test_send_transaction_preflight_and_its_errors(node, wallet, payer):
    to = Keypair().pubkey()
    error = refusal(wallet, system_transfer(payer, to, 20 * LAMPORTS_PER_SOL, wallet.blockhash()))
    assert error.code == -32002
    assert error.message == "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1"
    assert error.data["err"] == {"InstructionError": [0, {"Custom": 1}]}
    assert "Transfer: insufficient lamports" in " ".join(error.data["logs"])

    broke = Keypair()
    error = refusal(wallet, system_transfer(broke, to, 1_000_000, wallet.blockhash()))
    assert (error.code, error.data["err"]) == (-32002, "AccountNotFound")

    forged = system_transfer(payer, to, 1_000_000, wallet.blockhash())
    forged = type(forged).populate(forged.message, [Keypair().sign_message(bytes(forged.message))])
    assert refusal(wallet, forged).code == -32003

    assert rpc_error(node, "sendTransaction", "not base58!").code == -32602
    # base58 is the default encoding
    signature = node.rpc("sendTransaction", b58encode(bytes(system_transfer(payer, to, 1_000_000, wallet.blockhash()))))
    node.rpc("double_produceBlocks", 1)
    assert node.rpc("getSignatureStatuses", [signature])["value"][0]["err"] is None


def test_a_failed_transaction_sent_without_preflight_lands_with_its_error_and_pays_its_fee(node, wallet, payer):
    to = Keypair().pubkey()
    before = node.rpc("getBalance", str(payer.pubkey()), {"commitment": "processed"})["value"]
    signature = wallet.transfer(payer, to, 20 * LAMPORTS_PER_SOL, skipPreflight=True)
    never_lands = wallet.transfer(Keypair(), to, 1_000_000, skipPreflight=True)  # no funds for the fee: not executed
    slot = node.rpc("double_produceBlocks", 2) - 1

    tx = node.rpc("getTransaction", signature, {"commitment": "confirmed"})
    assert tx["slot"] == slot
    assert tx["meta"]["err"] == {"InstructionError": [0, {"Custom": 1}]}
    assert tx["meta"]["status"] == {"Err": {"InstructionError": [0, {"Custom": 1}]}}
    assert tx["meta"]["postBalances"] == [before - FEE, 0, 1]
    assert node.rpc("getBalance", str(payer.pubkey()), {"commitment": "confirmed"})["value"] == before - FEE
    assert node.rpc("getSignatureStatuses", [never_lands])["value"] == [None]
    assert node.rpc("getTransaction", never_lands, {"commitment": "confirmed"}) is None


def test_dropping_blocks_abandons_their_fork_but_never_a_finalized_block(node, wallet, payer):
    to = Keypair().pubkey()
    signature = wallet.transfer(payer, to, 6_000_000)
    paid = node.rpc("double_produceBlocks", 2) - 1
    assert node.rpc("getBalance", str(to), {"commitment": "confirmed"})["value"] == 6_000_000

    assert node.rpc("double_dropBlocks", 2) == paid - 1

    assert node.rpc("getBalance", str(to), {"commitment": "processed"})["value"] == 0
    assert node.rpc("getSignatureStatuses", [signature])["value"] == [None]
    assert node.rpc("getSignaturesForAddress", str(to), {"commitment": "confirmed"}) == []
    newest = node.rpc("double_produceBlocks", 2)
    assert newest == paid + 3  # the dropped slots stay empty
    assert node.rpc("getBlock", newest - 1, {"commitment": "confirmed"})["parentSlot"] == paid - 1

    node.rpc("double_produceBlocks", 40)
    assert rpc_error(node, "double_dropBlocks", 32).code == -32602


def test_requests_answer_as_json_rpc_2(node):
    assert rpc_error(node, "getAccountInfoX").code == -32601
    assert rpc_error(node, "getBalance", "not-a-key").code == -32602
    assert rpc_error(node, "getSlot", {"commitment": "max"}).code == -32602
    batch = [{"jsonrpc": "2.0", "id": i, "method": "getSlot", "params": []} for i in (1, 2)]
    assert post(node, json.dumps(batch).encode()) == [{"jsonrpc": "2.0", "result": 0, "id": i} for i in (1, 2)]
    assert post(node, b"{not json")["error"]["code"] == -32700


def test_blocks_come_on_their_own_with_a_block_time():
    with SolanaDouble(block_time_ms=20) as node:
        deadline = time.monotonic() + 5
        while node.rpc("getSlot", {"commitment": "processed"}) < 5:
            assert time.monotonic() < deadline, "no blocks produced"
            time.sleep(0.02)


def test_slot_subscribe_notifies_every_produced_block_until_unsubscribed(node):
    ws = websocket.create_connection(node.ws_url, timeout=5)
    try:
        ws.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "slotSubscribe"}))
        subscription = json.loads(ws.recv())["result"]
        node.rpc("double_skipSlots", 1)
        node.rpc("double_produceBlocks", 2)
        notes = [json.loads(ws.recv()) for _ in range(2)]
        assert [n["method"] for n in notes] == ["slotNotification"] * 2
        assert [n["params"] for n in notes] == [
            {"subscription": subscription, "result": {"parent": 0, "root": 0, "slot": 2}},
            {"subscription": subscription, "result": {"parent": 2, "root": 0, "slot": 3}},
        ]
        ws.send(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "slotUnsubscribe", "params": [subscription]}))
        assert json.loads(ws.recv()) == {"jsonrpc": "2.0", "result": True, "id": 8}
        ws.send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "slotUnsubscribe", "params": [subscription]}))
        assert json.loads(ws.recv())["error"]["code"] == -32602
        ws.send(json.dumps({"jsonrpc": "2.0", "id": 10, "method": "blockSubscribe"}))
        assert json.loads(ws.recv())["error"]["code"] == -32601
        node.rpc("double_produceBlocks", 1)
        ws.settimeout(0.3)
        with pytest.raises(websocket.WebSocketTimeoutException):
            ws.recv()  # unsubscribed: nothing more
    finally:
        ws.close()
