"""Version 0 transactions whose recipient comes from an address lookup table, as wallets send them."""

from __future__ import annotations

import struct

import pytest
from solders.address_lookup_table_account import ID as LOOKUP_TABLE_PROGRAM
from solders.address_lookup_table_account import AddressLookupTableAccount, derive_lookup_table_address
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import MessageV0
from solders.pubkey import Pubkey
from solders.system_program import ID as SYSTEM_PROGRAM
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from infra.devnet.solana_double import RpcError
from kernodeck_watchers.chains.base import SeenTransfer
from kernodeck_watchers.chains.solana import SolanaClient


def lookup_table(node, wallet, payer: Keypair, addresses: list[Pubkey]) -> Pubkey:
    """A lookup table holding `addresses`, created and extended by the real lookup table program."""
    recent_slot = node.rpc("getSlot", {"commitment": "processed"})
    table, bump = derive_lookup_table_address(payer.pubkey(), recent_slot)
    accounts = [
        AccountMeta(table, is_signer=False, is_writable=True),
        AccountMeta(payer.pubkey(), is_signer=True, is_writable=False),
        AccountMeta(payer.pubkey(), is_signer=True, is_writable=True),
        AccountMeta(SYSTEM_PROGRAM, is_signer=False, is_writable=False),
    ]
    create = Instruction(LOOKUP_TABLE_PROGRAM, struct.pack("<IQB", 0, recent_slot, bump), accounts)
    extend = Instruction(
        LOOKUP_TABLE_PROGRAM,
        struct.pack("<IQ", 2, len(addresses)) + b"".join(bytes(a) for a in addresses),
        accounts,
    )
    wallet.execute(payer, [create, extend])
    node.rpc("double_produceBlocks", 1)  # addresses are usable from the slot after they were added
    return table


def test_a_transfer_to_a_looked_up_address_is_found_at_its_loaded_index(node, wallet, payer):
    watched = Keypair().pubkey()
    table = lookup_table(node, wallet, payer, [watched])
    message = MessageV0.try_compile(
        payer.pubkey(),
        [transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=watched, lamports=4_000_000))],
        [AddressLookupTableAccount(table, [watched])],
        wallet.blockhash(),
    )
    signature = wallet.send(VersionedTransaction(message, [payer]))
    slot = node.rpc("double_produceBlocks", 2) - 1
    client = SolanaClient(node.url, commitment="confirmed")

    transfers = client.transfers_in_block(client.block(slot), {str(watched)})

    # static keys [payer, System program], then the loaded writable recipient
    assert transfers == [SeenTransfer(signature, 2, str(watched), None, 4_000_000)]
    with pytest.raises(RpcError) as unsupported:
        node.rpc("getBlock", slot, {"commitment": "confirmed"})
    assert unsupported.value.code == -32015
    item = node.rpc("getTransaction", signature, {"commitment": "confirmed", "maxSupportedTransactionVersion": 0})
    assert item["version"] == 0
    assert item["transaction"]["message"]["addressTableLookups"] == [
        {"accountKey": str(table), "readonlyIndexes": [], "writableIndexes": [0]}
    ]
    assert item["meta"]["loadedAddresses"] == {"readonly": [], "writable": [str(watched)]}
    assert client.address_activity([str(watched)], 0) == [(transfers[0], client.block(slot))]
    # what the scan asks for: the accounts and balances, not the instructions and logs
    config = {"commitment": "confirmed", "maxSupportedTransactionVersion": 0, "transactionDetails": "accounts"}
    (accounts,) = [
        i for i in node.rpc("getBlock", slot, config)["transactions"] if signature in i["transaction"]["signatures"]
    ]
    assert accounts["transaction"]["accountKeys"] == [
        {"pubkey": str(payer.pubkey()), "signer": True, "source": "transaction", "writable": True},
        {"pubkey": str(SYSTEM_PROGRAM), "signer": False, "source": "transaction", "writable": False},
        {"pubkey": str(watched), "signer": False, "source": "lookupTable", "writable": True},
    ]
    assert "logMessages" not in accounts["meta"] and accounts["meta"]["postBalances"] == item["meta"]["postBalances"]
