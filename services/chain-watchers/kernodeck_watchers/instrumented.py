"""A chain client whose node calls are timed and whose failures are counted, per network."""

import time
from collections.abc import Callable, Collection, Container
from typing import TypeVar

from kernodeck_watchers import metrics
from kernodeck_watchers.chains.base import BlockRef, ChainClient, NodeError, SeenTransfer, TokenBalances, match_key

T = TypeVar("T")


class InstrumentedClient:
    def __init__(self, client: ChainClient):
        self.client = client
        self.network = client.network
        self.match_key = match_key(client)

    @property
    def unseen(self) -> frozenset[str]:
        return self.client.unseen

    def normalize(self, address: str) -> str:
        return self.client.normalize(address)

    def tip(self) -> BlockRef:
        return self._measure("tip", self.client.tip)

    def block(self, height: int) -> BlockRef:
        return self._measure("block", self.client.block, height)

    def block_hash(self, height: int) -> str:
        return self._measure("block_hash", self.client.block_hash, height)

    def transfers_in_block(self, block: BlockRef, watched: Container[str]) -> list[SeenTransfer]:
        return self._measure("transfers_in_block", self.client.transfers_in_block, block, watched)

    def pending_transfers(self, watched: Container[str]) -> list[SeenTransfer]:
        return self._measure("pending_transfers", self.client.pending_transfers, watched)

    def balances(self, addresses: list[str], height: int) -> dict[str, int]:
        return self._measure("balances", self.client.balances, addresses, height)

    def token_balances(self, holdings: list[tuple[str, str]], height: int) -> dict[tuple[str, str], int]:
        if not isinstance(self.client, TokenBalances):  # a network whose client reads no token balances
            return {}
        return self._measure("token_balances", self.client.token_balances, holdings, height)

    def address_activity(
        self, addresses: Collection[str], since_height: int
    ) -> list[tuple[SeenTransfer, BlockRef | None]]:
        return self._measure("address_activity", self.client.address_activity, addresses, since_height)

    def _measure(self, call: str, method: Callable[..., T], *args) -> T:
        started = time.perf_counter()
        try:
            return method(*args)
        except NodeError:
            metrics.RPC_ERRORS.labels(self.network, call).inc()
            raise
        finally:
            metrics.RPC_SECONDS.labels(self.network, call).observe(time.perf_counter() - started)
