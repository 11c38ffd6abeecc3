"""SPL token transfers, executed by the real Token and associated token account programs."""

from __future__ import annotations

from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from solders.rent import Rent
from solders.system_program import ID as SYSTEM_PROGRAM
from solders.system_program import CreateAccountParams, create_account
from solders.token.associated import get_associated_token_address

from kernodeck_watchers.chains.base import SeenTransfer
from kernodeck_watchers.chains.solana import SolanaClient

TOKEN_PROGRAM = Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA")
ASSOCIATED_TOKEN_PROGRAM = Pubkey.from_string("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL")
MINT_LEN = 82
DECIMALS = 6


def new_mint(node, wallet, payer: Keypair) -> Pubkey:
    """A mint with 6 decimals whose authority is the payer, holding 1,000 tokens in the payer's account."""
    mint = Keypair()
    create = create_account(
        CreateAccountParams(
            from_pubkey=payer.pubkey(),
            to_pubkey=mint.pubkey(),
            lamports=Rent.default().minimum_balance(MINT_LEN),
            space=MINT_LEN,
            owner=TOKEN_PROGRAM,
        )
    )
    initialize = Instruction(  # InitializeMint2: decimals, mint authority, no freeze authority
        TOKEN_PROGRAM,
        bytes([20, DECIMALS]) + bytes(payer.pubkey()) + bytes([0]),
        [AccountMeta(mint.pubkey(), is_signer=False, is_writable=True)],
    )
    wallet.execute(payer, [create, initialize], mint)
    node.rpc("double_produceBlocks", 1)
    source = open_account(wallet, payer, payer.pubkey(), mint.pubkey())
    node.rpc("double_produceBlocks", 1)
    mint_to = Instruction(  # MintTo
        TOKEN_PROGRAM,
        bytes([7]) + (1_000 * 10**DECIMALS).to_bytes(8, "little"),
        [
            AccountMeta(mint.pubkey(), is_signer=False, is_writable=True),
            AccountMeta(source, is_signer=False, is_writable=True),
            AccountMeta(payer.pubkey(), is_signer=True, is_writable=False),
        ],
    )
    wallet.execute(payer, [mint_to])
    node.rpc("double_produceBlocks", 1)
    return mint.pubkey()


def open_account(wallet, payer: Keypair, owner: Pubkey, mint: Pubkey) -> Pubkey:
    """The owner's associated token account, created (idempotently) by the associated token program."""
    account = get_associated_token_address(owner, mint)
    wallet.execute(
        payer,
        [
            Instruction(
                ASSOCIATED_TOKEN_PROGRAM,
                bytes([1]),  # CreateIdempotent
                [
                    AccountMeta(payer.pubkey(), is_signer=True, is_writable=True),
                    AccountMeta(account, is_signer=False, is_writable=True),
                    AccountMeta(owner, is_signer=False, is_writable=False),
                    AccountMeta(mint, is_signer=False, is_writable=False),
                    AccountMeta(SYSTEM_PROGRAM, is_signer=False, is_writable=False),
                    AccountMeta(TOKEN_PROGRAM, is_signer=False, is_writable=False),
                ],
            )
        ],
    )
    return account


def send_tokens(wallet, payer: Keypair, mint: Pubkey, to_owner: Pubkey, amount: int) -> str:
    transfer_checked = Instruction(
        TOKEN_PROGRAM,
        bytes([12]) + amount.to_bytes(8, "little") + bytes([DECIMALS]),
        [
            AccountMeta(get_associated_token_address(payer.pubkey(), mint), is_signer=False, is_writable=True),
            AccountMeta(mint, is_signer=False, is_writable=False),
            AccountMeta(get_associated_token_address(to_owner, mint), is_signer=False, is_writable=True),
            AccountMeta(payer.pubkey(), is_signer=True, is_writable=False),
        ],
    )
    return wallet.execute(payer, [transfer_checked])


def test_a_token_transfer_to_a_watched_owner_is_found_with_its_mint_and_base_units(node, wallet, payer):
    usdc, lookalike = new_mint(node, wallet, payer), new_mint(node, wallet, payer)
    watched = Keypair().pubkey()
    for mint in (usdc, lookalike):
        open_account(wallet, payer, watched, mint)
    node.rpc("double_produceBlocks", 1)
    paid = send_tokens(wallet, payer, usdc, watched, 1_500_000)
    other = send_tokens(wallet, payer, lookalike, watched, 2_000_000)
    slot = node.rpc("double_produceBlocks", 2) - 1
    client = SolanaClient(node.url, commitment="confirmed")

    transfers = client.transfers_in_block(client.block(slot), {str(watched)})

    keys = {
        t["transaction"]["signatures"][0]: t["transaction"]["message"]["accountKeys"]
        for t in node.rpc("getBlock", slot, {"commitment": "confirmed"})["transactions"]
    }
    usdc_account = keys[paid].index(str(get_associated_token_address(watched, usdc)))
    lookalike_account = keys[other].index(str(get_associated_token_address(watched, lookalike)))
    assert transfers == [
        SeenTransfer(paid, usdc_account, str(watched), str(usdc), 1_500_000),
        SeenTransfer(other, lookalike_account, str(watched), str(lookalike), 2_000_000),
    ]

    topped_up = send_tokens(wallet, payer, usdc, watched, 500_000)
    slot = node.rpc("double_produceBlocks", 2) - 1
    found = client.transfers_in_block(client.block(slot), {str(watched)})
    assert [(t.txid, t.amount) for t in found] == [(topped_up, 500_000)]  # what came in, not the balance


def test_token_balances_have_agave_fields(node, wallet, payer):
    mint = new_mint(node, wallet, payer)
    watched = Keypair().pubkey()
    open_account(wallet, payer, watched, mint)
    node.rpc("double_produceBlocks", 1)
    signature = send_tokens(wallet, payer, mint, watched, 1_500_000)
    node.rpc("double_produceBlocks", 2)

    meta = node.rpc("getTransaction", signature, {"commitment": "confirmed"})["meta"]

    account = str(get_associated_token_address(watched, mint))
    keys = node.rpc("getTransaction", signature, {"commitment": "confirmed"})["transaction"]["message"]["accountKeys"]
    [received] = [b for b in meta["postTokenBalances"] if b["owner"] == str(watched)]
    assert received == {
        "accountIndex": keys.index(account),
        "mint": str(mint),
        "owner": str(watched),
        "programId": str(TOKEN_PROGRAM),
        "uiTokenAmount": {"amount": "1500000", "decimals": 6, "uiAmount": 1.5, "uiAmountString": "1.5"},
    }
    [before] = [b for b in meta["preTokenBalances"] if b["owner"] == str(watched)]
    assert before["uiTokenAmount"]["amount"] == "0"
