"""What the watcher core needs from a network's node, whatever the network.

A client speaks only the network's standard API (Bitcoin Core JSON-RPC,
Ethereum JSON-RPC, the Tron full-node HTTP API, Solana JSON-RPC), so the same
code runs against regtest nodes, test doubles and mainnet. Amounts are base
units (int); `token` is the contract (Solana: the mint) or None for the
network's own coin. Matching a block against the watched addresses is a
hash lookup per output or log (`Watched.get`), never a loop over addresses.
"""

from collections.abc import Collection
from typing import Protocol, runtime_checkable

from kernodeck_watchers.domain.blocks import BlockRef, SeenTransfer
from kernodeck_watchers.domain.watched import MatchKey


class Watched(Protocol):
    """The watched addresses, as the client spells them (checksummed, base58...)."""

    def __contains__(self, address: str) -> bool: ...


class NodeError(Exception):
    """The node did not answer, or answered with an error: the watcher backs off (and reports lag once the
    lag limits are exceeded)."""


class BlockNotYet(NodeError):
    """The node has no block yet at a height at or below the tip it reported: a load-balanced provider whose
    backends race (Ethereum's `null`, Solana's "block not available", Tron's empty answer). The pass stops at the
    last block it committed and the next one goes on: nothing is wrong."""


class Throttled(NodeError):
    """The node (a provider) answered HTTP 429: no request before `retry_after_s` (its Retry-After), when given."""

    def __init__(self, message: str, retry_after_s: float | None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ChainClient(Protocol):
    network: str
    # Kinds of transfer to a watched address this client cannot see with its node (see WatcherStatus.unseen).
    unseen: frozenset[str]

    def normalize(self, address: str) -> str:
        """The one spelling of an address used for matching (Ethereum: lowercase hex)."""

    def tip(self) -> BlockRef:
        """The newest block the node has (for Tron and Solana: the newest the chosen commitment allows)."""

    def block(self, height: int) -> BlockRef:
        """The block at `height` on the node's best chain, with its contents as `payload` where that costs no
        more requests than the ref alone."""

    def block_hash(self, height: int) -> str:
        """The hash of the block at `height` on the node's best chain: the reorg walk's cheap question."""

    def transfers_in_block(self, block: BlockRef, watched: Watched) -> list[SeenTransfer]:
        """Every transfer in `block` to a watched address: native coin, and tokens of any contract (their
        `token`); payments tells the contracts it accepts from the others, which it records as unknown.
        Read from `block.payload` when there is one, else from the node by the block's hash."""

    def pending_transfers(self, watched: Watched) -> list[SeenTransfer]:
        """Transfers to watched addresses not yet in a block (mempool); [] where the network has none to show."""

    def balances(self, addresses: list[str], height: int) -> dict[str, int]:
        """Each address's balance of the network's own coin, in base units: at `height` where the node can say
        (Ethereum), else at its tip (the balance check confirms a difference before reporting it)."""

    def address_activity(
        self, addresses: Collection[str], since_height: int
    ) -> list[tuple[SeenTransfer, BlockRef | None]]:
        """A targeted look at a few addresses ("J'ai payé", new watches): their transfers in the blocks from
        `since_height` to the tip, each with the block it was found in, and in the mempool (block None)."""


def match_key(client: ChainClient) -> MatchKey | None:
    """The client's `match_key`, where its network's blocks name addresses in another form than the watched
    spelling (Tron: `TronClient.match_key`): the watched set keeps each address's key in that form."""
    return getattr(client, "match_key", None)


@runtime_checkable
class TokenBalances(Protocol):
    """A client whose network has tokens the balance check can read (ERC-20, TRC-20)."""

    def token_balances(self, holdings: list[tuple[str, str]], height: int) -> dict[tuple[str, str], int]:
        """Each (address, token contract)'s balance of that token, in its base units: at `height` where the node
        can say (Ethereum), else at its tip. A contract that does not answer `balanceOf` is left out."""
