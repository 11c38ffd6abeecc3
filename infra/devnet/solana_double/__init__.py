"""A Solana JSON-RPC node for tests and `make run`: no validator exists in any registry.

Its execution engine is LiteSVM (`solders.litesvm`: the real SVM and the
real System and SPL Token programs); around it the double keeps what a
validator adds: slots and blocks, a block store, a per-address signature
index and commitment levels. It answers agave's JSON-RPC methods with
agave's shapes and error codes, and test-only `double_*` methods::

    with SolanaDouble() as node:                 # blocks on demand
        sig = node.rpc("requestAirdrop", address, 10**9)
        node.rpc("double_produceBlocks", 1)      # the airdrop lands in the next block
        node.rpc("getBalance", address, {"commitment": "processed"})

CLI: ``python -m infra.devnet.solana_double --help``.
"""

from .jsonrpc import RpcError
from .server import SolanaDouble

__all__ = ["RpcError", "SolanaDouble"]
