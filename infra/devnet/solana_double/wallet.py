"""What a wallet does: build and sign transactions, and hand them to a node through standard JSON-RPC."""

from __future__ import annotations

import base64

from solders.hash import Hash
from solders.instruction import Instruction
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.transaction import VersionedTransaction

from . import jsonrpc


def system_transfer(payer: Keypair, to: Pubkey, lamports: int, blockhash: Hash) -> VersionedTransaction:
    instruction = transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=to, lamports=lamports))
    return VersionedTransaction(Message.new_with_blockhash([instruction], payer.pubkey(), blockhash), [payer])


class Wallet:
    def __init__(self, url: str):
        self.url = url

    def blockhash(self) -> Hash:
        value = jsonrpc.call(self.url, "getLatestBlockhash", {"commitment": "confirmed"})["value"]
        return Hash.from_string(value["blockhash"])

    def send(self, tx: VersionedTransaction, **config: object) -> str:
        """`sendTransaction` (base64); returns the signature. Preflight errors raise jsonrpc.RpcError."""
        encoded = base64.b64encode(bytes(tx)).decode()
        return jsonrpc.call(self.url, "sendTransaction", encoded, {"encoding": "base64", **config})

    def transfer(self, payer: Keypair, to: Pubkey, lamports: int, **config: object) -> str:
        return self.send(system_transfer(payer, to, lamports, self.blockhash()), **config)

    def execute(self, payer: Keypair, instructions: list[Instruction], *signers: Keypair) -> str:
        message = Message.new_with_blockhash(instructions, payer.pubkey(), self.blockhash())
        return self.send(VersionedTransaction(message, [payer, *signers]))
