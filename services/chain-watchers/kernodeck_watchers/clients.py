"""The chain client of each network, built from the settings."""

from collections.abc import Callable

from kernodeck_watchers.chains.base import ChainClient
from kernodeck_watchers.chains.ethereum import EthereumClient
from kernodeck_watchers.chains.jsonrpc import JsonRpc
from kernodeck_watchers.chains.solana import SolanaClient
from kernodeck_watchers.chains.tron import TronClient
from kernodeck_watchers.chains.utxo import UtxoClient
from kernodeck_watchers.config import WatcherSettings


def utxo_rpc(settings: WatcherSettings, timeout_s: float) -> JsonRpc:
    """The Bitcoin or Litecoin node's JSON-RPC, with its credentials."""
    network = settings.network
    return JsonRpc(
        getattr(settings, f"{network}_rpc_url"),
        timeout_s,
        user=getattr(settings, f"{network}_rpc_user"),
        password=getattr(settings, f"{network}_rpc_password"),
        version="1.0",
    )


def _utxo(settings: WatcherSettings) -> ChainClient:
    return UtxoClient(settings.network, utxo_rpc(settings, settings.rpc_timeout_s))


BUILDERS: dict[str, Callable[[WatcherSettings], ChainClient]] = {
    "bitcoin": _utxo,
    "litecoin": _utxo,
    "ethereum": lambda s: EthereumClient(
        s.ethereum_rpc_url, "ethereum", s.rpc_timeout_s, s.ethereum_logs_max_blocks, s.ethereum_trace_retry_s
    ),
    "tron": lambda s: TronClient(s.tron_url, "tron", timeout_s=s.rpc_timeout_s, api_key=s.tron_api_key),
    "solana": lambda s: SolanaClient(
        s.solana_rpc_url,
        "solana",
        s.solana_commitment,
        s.rpc_timeout_s,
        fetch_ahead=s.solana_fetch_ahead_slots,
        tip_delay=s.solana_tip_delay_blocks,
    ),
}


def build_client(settings: WatcherSettings) -> ChainClient:
    builder = BUILDERS.get(settings.network)
    if builder is None:
        raise ValueError(f"no chain client for {settings.network} in this build")
    return builder(settings)
