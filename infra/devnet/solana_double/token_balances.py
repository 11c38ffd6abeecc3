"""SPL token balances of a transaction's accounts, as `meta.preTokenBalances` / `postTokenBalances` show them."""

from __future__ import annotations

from decimal import Decimal

from solders.litesvm import LiteSVM
from solders.pubkey import Pubkey
from solders.token.state import Mint, TokenAccount

TOKEN_PROGRAMS = {
    Pubkey.from_string("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"),
    Pubkey.from_string("TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"),  # Token-2022
}
ACCOUNT_LEN = 165  # a token account's base layout; Token-2022 appends extensions after it
MINT_LEN = 82
ACCOUNT_TYPE_ACCOUNT = 2  # Token-2022: the byte after the base layout tells an account from a mint


def token_balances(svm: LiteSVM, keys: list[Pubkey]) -> list[dict]:
    balances = []
    for index, key in enumerate(keys):
        account = svm.get_account(key)
        if account is None or account.owner not in TOKEN_PROGRAMS or not _is_token_account(account.data):
            continue
        try:
            state = TokenAccount.from_bytes(account.data[:ACCOUNT_LEN])
            decimals = Mint.from_bytes(svm.get_account(state.mint).data[:MINT_LEN]).decimals
        except ValueError:  # not initialized yet: the runtime records no balance either
            continue
        balances.append(
            {
                "accountIndex": index,
                "mint": str(state.mint),
                "owner": str(state.owner),
                "programId": str(account.owner),
                "uiTokenAmount": ui_token_amount(state.amount, decimals),
            }
        )
    return balances


def ui_token_amount(amount: int, decimals: int) -> dict:
    value = Decimal(amount).scaleb(-decimals)
    return {
        "amount": str(amount),
        "decimals": decimals,
        "uiAmount": float(value),
        "uiAmountString": format(value.normalize(), "f"),
    }


def _is_token_account(data: bytes) -> bool:
    return len(data) == ACCOUNT_LEN or (len(data) > ACCOUNT_LEN and data[ACCOUNT_LEN] == ACCOUNT_TYPE_ACCOUNT)
