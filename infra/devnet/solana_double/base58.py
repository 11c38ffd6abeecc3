"""Base58 as Solana spells instruction data and base58-encoded transactions: the chains library's codec."""

from functools import partial

from kernodeck_chains import base58

MAX_BASE58_SIZE = 1683  # agave's bound on a base58 transaction: the text of the largest packet (1,232 bytes)

b58encode = base58.b58encode
b58decode = partial(base58.b58decode, max_length=MAX_BASE58_SIZE)
