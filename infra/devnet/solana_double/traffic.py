"""Mainnet-size blocks: the rest of the cluster's transactions, added to every block the double produces.

A mainnet block holds well over a thousand transactions, most of them votes
(each validator's TowerSync, signed by its identity, which pays the fee),
the rest programs' traffic (swaps through lookup tables, with token balances
and long logs): several megabytes of JSON in full, about half of that with
`transactionDetails: "accounts"`. With a `Traffic`, every block the double
produces carries such transactions after its own, in agave's shapes, so that
a client reads as much as on mainnet.

They were executed elsewhere, as far as the double knows: their accounts
(validators', traders', pools') are keys no test holds, and they are found in
blocks only (getBlock), not by getTransaction, getSignatureStatuses or
getSignaturesForAddress. Each block's traffic is drawn again from its slot on
every request, so a long run keeps none of it in memory. A validator's
identity pays 5,000 lamports per vote, so its balance is consistent from
block to block; traders' balances are drawn per block.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from solders.pubkey import Pubkey
from solders.signature import Signature

from .base58 import b58encode
from .token_balances import ui_token_amount

VOTE_PROGRAM = "Vote111111111111111111111111111111111111111"
COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111"
TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
VOTE_FEE = 5000
VOTE_ACCOUNT_LAMPORTS = 27_074_400  # a vote account's rent-exempt minimum
IDENTITY_LAMPORTS = 1_000 * 10**9
TOWER_SYNC_BYTES = 180  # a TowerSync instruction's data: the lockouts, the root, the bank hash, the block id
VOTE_UNITS = 2100
SWAP_PROGRAMS = 8
POOLS = 64
TRADERS = 4000
OK = {"Ok": None}


def _key(rng: random.Random) -> str:
    return str(Pubkey(rng.randbytes(32)))


@dataclass(frozen=True)
class _Vote:
    identity: str
    vote_account: str
    lamports: int  # the identity's balance at slot 0
    accounts: list[dict]  # transactionDetails "accounts"
    message: dict  # without recentBlockhash


@dataclass(frozen=True)
class _Pool:
    """A swap pool of one program: its state, authority and two vaults, and the lookup table a wallet uses."""

    program: str
    state: str
    authority: str
    vaults: tuple[str, str]
    mints: tuple[str, str]
    decimals: tuple[int, int]
    table: str
    looked_up: tuple[list[str], list[str]]  # writable, readonly
    accounts: list[dict]  # transactionDetails "accounts" from index 3 on (after the trader and its token accounts)


@dataclass
class Traffic:
    """`votes` vote transactions and `swaps` swaps in every block (mainnet: about 1,000 of each kind's total)."""

    votes: int = 1200
    swaps: int = 600
    seed: int = 7
    _validators: list[_Vote] = field(init=False, repr=False)
    _pools: list[_Pool] = field(init=False, repr=False)
    _traders: list[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        self._validators = [self._validator(rng) for _ in range(self.votes)]
        programs = [_key(rng) for _ in range(SWAP_PROGRAMS)]
        self._pools = [self._pool(rng, programs[i % SWAP_PROGRAMS]) for i in range(POOLS)]
        self._traders = [_key(rng) for _ in range(TRADERS)]

    def count(self) -> int:
        return self.votes + self.swaps

    def signatures(self, slot: int) -> Iterator[bytes]:
        """Each transaction's signature, in block order."""
        prefix = self.seed.to_bytes(8, "little") + slot.to_bytes(8, "little")
        for index in range(self.count()):
            yield hashlib.sha512(prefix + index.to_bytes(4, "little")).digest()

    def transactions(self, slot: int, recent_blockhash: str, details: str, max_version: int | None) -> list[dict]:
        """The block's traffic as getBlock's `transactions` entries for `details` "full" or "accounts"."""
        signatures = [str(Signature.from_bytes(s)) for s in self.signatures(slot)]
        entries = [
            self._vote(v, slot, signatures[i], recent_blockhash, details, max_version)
            for i, v in enumerate(self._validators)
        ]
        # Each swap drawn from its own signature: the same swap whatever the details asked for.
        entries += [
            self._swap(random.Random(signature), signature, recent_blockhash, details)
            for signature in signatures[self.votes :]
        ]
        return entries

    # ------------------------------------------------------------- votes --
    def _validator(self, rng: random.Random) -> _Vote:
        identity, vote_account = _key(rng), _key(rng)
        return _Vote(
            identity=identity,
            vote_account=vote_account,
            lamports=IDENTITY_LAMPORTS + rng.randrange(10**12),
            accounts=[
                {"pubkey": identity, "signer": True, "source": "transaction", "writable": True},
                {"pubkey": vote_account, "signer": False, "source": "transaction", "writable": True},
                {"pubkey": VOTE_PROGRAM, "signer": False, "source": "transaction", "writable": False},
            ],
            message={
                "accountKeys": [identity, vote_account, VOTE_PROGRAM],
                "header": {
                    "numReadonlySignedAccounts": 0,
                    "numReadonlyUnsignedAccounts": 1,
                    "numRequiredSignatures": 1,
                },
                "instructions": [
                    {
                        "accounts": [1, 0],
                        "data": b58encode(rng.randbytes(TOWER_SYNC_BYTES)),
                        "programIdIndex": 2,
                        "stackHeight": None,
                    }
                ],
            },
        )

    def _vote(self, v: _Vote, slot: int, signature: str, blockhash: str, details: str, max_version: int | None) -> dict:
        pre = v.lamports - VOTE_FEE * slot
        balances = ([pre, VOTE_ACCOUNT_LAMPORTS, 1], [pre - VOTE_FEE, VOTE_ACCOUNT_LAMPORTS, 1])
        if details == "accounts":
            item = {
                "meta": _simple_meta(VOTE_FEE, *balances, [], []),
                "transaction": {"accountKeys": v.accounts, "signatures": [signature]},
            }
        else:
            logs = [f"Program {VOTE_PROGRAM} invoke [1]", f"Program {VOTE_PROGRAM} success"]
            item = {
                "meta": _full_meta(VOTE_FEE, *balances, [], [], logs, [], VOTE_UNITS, ([], [])),
                "transaction": {"message": {**v.message, "recentBlockhash": blockhash}, "signatures": [signature]},
            }
        if max_version is not None:
            item["version"] = "legacy"
        return item

    # ------------------------------------------------------------- swaps --
    def _pool(self, rng: random.Random, program: str) -> _Pool:
        state, authority, vaults = _key(rng), _key(rng), (_key(rng), _key(rng))
        writable, readonly = [_key(rng) for _ in range(4)], [_key(rng) for _ in range(6)]
        static = [state, *vaults, authority, COMPUTE_BUDGET_PROGRAM, TOKEN_PROGRAM, program]
        accounts = [
            {"pubkey": key, "signer": False, "source": "transaction", "writable": i < 3} for i, key in enumerate(static)
        ]
        accounts += [{"pubkey": k, "signer": False, "source": "lookupTable", "writable": True} for k in writable]
        accounts += [{"pubkey": k, "signer": False, "source": "lookupTable", "writable": False} for k in readonly]
        return _Pool(
            program=program,
            state=state,
            authority=authority,
            vaults=vaults,
            mints=(_key(rng), _key(rng)),
            decimals=(rng.choice((6, 9)), rng.choice((6, 9))),
            table=_key(rng),
            looked_up=(writable, readonly),
            accounts=accounts,
        )

    def _swap(self, rng: random.Random, signature: str, blockhash: str, details: str) -> dict:
        """A version 0 swap: a trader's two token accounts against a pool's vaults, with a priority fee."""
        pool = rng.choice(self._pools)
        trader = rng.choice(self._traders)
        source, target = _key(rng), _key(rng)
        static = [trader, source, target, pool.state, *pool.vaults, pool.authority, COMPUTE_BUDGET_PROGRAM]
        static += [TOKEN_PROGRAM, pool.program]
        writable, readonly = pool.looked_up
        fee = VOTE_FEE + rng.randrange(1, 200_000)
        lamports = rng.randrange(10**7, 10**11)
        token_account = 2_039_280  # a token account's rent-exempt minimum
        rest = [token_account, token_account, rng.randrange(10**7, 10**10), token_account, token_account, 0, 1, 1, 1]
        rest += [rng.randrange(10**6, 10**9) for _ in writable] + [1] * len(readonly)
        pre, post = [lamports, *rest], [lamports - fee, *rest]
        amount_in, amount_out = rng.randrange(1, 10**12), rng.randrange(1, 10**12)
        vault_in, vault_out = rng.randrange(10**12, 10**15), rng.randrange(10**12, 10**15)
        held_in, held_out = amount_in + rng.randrange(10**12), rng.randrange(10**12)
        (mint_in, mint_out), (dec_in, dec_out) = pool.mints, pool.decimals

        def balance(index: int, mint: str, owner: str, amount: int, decimals: int) -> dict:
            return {
                "accountIndex": index,
                "mint": mint,
                "owner": owner,
                "programId": TOKEN_PROGRAM,
                "uiTokenAmount": ui_token_amount(amount, decimals),
            }

        pre_tokens = [
            balance(1, mint_in, trader, held_in, dec_in),
            balance(2, mint_out, trader, held_out, dec_out),
            balance(4, mint_in, pool.authority, vault_in, dec_in),
            balance(5, mint_out, pool.authority, vault_out + amount_out, dec_out),
        ]
        post_tokens = [
            balance(1, mint_in, trader, held_in - amount_in, dec_in),
            balance(2, mint_out, trader, held_out + amount_out, dec_out),
            balance(4, mint_in, pool.authority, vault_in + amount_in, dec_in),
            balance(5, mint_out, pool.authority, vault_out, dec_out),
        ]
        if details == "accounts":
            accounts = [
                {"pubkey": trader, "signer": True, "source": "transaction", "writable": True},
                {"pubkey": source, "signer": False, "source": "transaction", "writable": True},
                {"pubkey": target, "signer": False, "source": "transaction", "writable": True},
                *pool.accounts,
            ]
            meta = _simple_meta(fee, pre, post, pre_tokens, post_tokens)
            return {"meta": meta, "transaction": {"accountKeys": accounts, "signatures": [signature]}, "version": 0}
        units = rng.randrange(40_000, 180_000)
        logs = [
            f"Program {COMPUTE_BUDGET_PROGRAM} invoke [1]",
            f"Program {COMPUTE_BUDGET_PROGRAM} success",
            f"Program {COMPUTE_BUDGET_PROGRAM} invoke [1]",
            f"Program {COMPUTE_BUDGET_PROGRAM} success",
            f"Program {pool.program} invoke [1]",
            "Program log: Instruction: Route",
            "Program log: Instruction: SharedAccountsRoute",
            f"Program log: in_amount: {amount_in}, quoted_out_amount: {amount_out}, slippage_bps: 50, platform_fee_bps: 0",
            "Program log: Instruction: Swap",
            f"Program log: amount_in: {amount_in}, minimum_amount_out: {amount_out}",
            f"Program {TOKEN_PROGRAM} invoke [2]",
            "Program log: Instruction: TransferChecked",
            f"Program {TOKEN_PROGRAM} consumed 6238 of {units} compute units",
            f"Program {TOKEN_PROGRAM} success",
            f"Program {TOKEN_PROGRAM} invoke [2]",
            "Program log: Instruction: TransferChecked",
            f"Program {TOKEN_PROGRAM} consumed 6147 of {units - 12_000} compute units",
            f"Program {TOKEN_PROGRAM} success",
            f"Program data: {b58encode(rng.randbytes(96))}",
            f"Program {pool.program} consumed {units - 20_000} of {units - 300} compute units",
            f"Program {pool.program} success",
        ]
        inner = [
            {
                "index": 2,
                "instructions": [
                    {
                        "accounts": [1, 11, 4, 0],
                        "data": b58encode(rng.randbytes(10)),
                        "programIdIndex": 8,
                        "stackHeight": 2,
                    },
                    {
                        "accounts": [5, 12, 2, 6],
                        "data": b58encode(rng.randbytes(10)),
                        "programIdIndex": 8,
                        "stackHeight": 2,
                    },
                ],
            }
        ]
        message = {
            "accountKeys": static,
            "addressTableLookups": [
                {"accountKey": pool.table, "readonlyIndexes": [4, 5, 6, 7, 8, 9], "writableIndexes": [0, 1, 2, 3]}
            ],
            "header": {"numReadonlySignedAccounts": 0, "numReadonlyUnsignedAccounts": 4, "numRequiredSignatures": 1},
            "instructions": [
                {"accounts": [], "data": b58encode(rng.randbytes(5)), "programIdIndex": 7, "stackHeight": None},
                {"accounts": [], "data": b58encode(rng.randbytes(9)), "programIdIndex": 7, "stackHeight": None},
                {
                    "accounts": [0, 3, 6, 1, 2, 4, 5, 8, 10, 11, 12, 13, 14, 15, 16, 17],
                    "data": b58encode(rng.randbytes(24)),
                    "programIdIndex": 9,
                    "stackHeight": None,
                },
            ],
            "recentBlockhash": blockhash,
        }
        meta = _full_meta(fee, pre, post, pre_tokens, post_tokens, logs, inner, units, (writable, readonly))
        return {"meta": meta, "transaction": {"message": message, "signatures": [signature]}, "version": 0}


def _simple_meta(fee: int, pre: list, post: list, pre_tokens: list, post_tokens: list) -> dict[str, Any]:
    """agave's build_simple_ui_transaction_status_meta: what `transactionDetails: "accounts"` carries."""
    return {
        "err": None,
        "fee": fee,
        "postBalances": post,
        "postTokenBalances": post_tokens,
        "preBalances": pre,
        "preTokenBalances": pre_tokens,
        "status": OK,
    }


def _full_meta(
    fee: int,
    pre: list,
    post: list,
    pre_tokens: list,
    post_tokens: list,
    logs: list[str],
    inner: list[dict],
    units: int,
    loaded: tuple[list[str], list[str]],
) -> dict[str, Any]:
    return {
        "computeUnitsConsumed": units,
        "err": None,
        "fee": fee,
        "innerInstructions": inner,
        "loadedAddresses": {"readonly": loaded[1], "writable": loaded[0]},
        "logMessages": logs,
        "postBalances": post,
        "postTokenBalances": post_tokens,
        "preBalances": pre,
        "preTokenBalances": pre_tokens,
        "rewards": [],
        "status": OK,
    }
