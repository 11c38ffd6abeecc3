"""Watcher settings (WATCHER_*), validated at start; one process watches one network.

The node of each network is reached with its own settings (for example
WATCHER_BITCOIN_RPC_URL, WATCHER_BITCOIN_RPC_USER, WATCHER_BITCOIN_RPC_PASSWORD,
WATCHER_BITCOIN_ZMQ_URL, WATCHER_ETHEREUM_WS_URL); the process reads only those of its `network`.
"""

from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict

from kernodeck_kit.settings import ServiceSettings
from kernodeck_watchers.domain.progress import Limits

Network = Literal["bitcoin", "litecoin", "ethereum", "tron", "solana"]

# The same numbers as payments' defaults; payments tells the watcher each
# address's own requirement, these apply to transfers on addresses it did not.
DEFAULT_CONFIRMATIONS: dict[str, int] = {"bitcoin": 2, "litecoin": 6, "ethereum": 12, "tron": 19, "solana": 32}
# Blocks behind the node before payments stops offering the network: about
# 20 minutes on Bitcoin, 10 on Litecoin, 2 on Ethereum, 1 on Tron and Solana.
DEFAULT_LAG_BLOCKS: dict[str, int] = {"bitcoin": 2, "litecoin": 4, "ethereum": 10, "tron": 20, "solana": 150}
# How far back a targeted look goes ("J'ai payé", a new watch), in blocks: about 30 minutes on Bitcoin
# and Litecoin, 2 on Ethereum, 1 on Tron, 10 on Solana (whose look costs per address, not per block).
DEFAULT_TARGETED_CHECK_BLOCKS: dict[str, int] = {
    "bitcoin": 3,
    "litecoin": 12,
    "ethereum": 10,
    "tron": 20,
    "solana": 1500,
}
# The networks' block times, in seconds: while the node is silent, the blocks it has likely made meanwhile count
# towards the lag limit.
BLOCK_SECONDS: dict[str, float] = {"bitcoin": 600, "litecoin": 150, "ethereum": 12, "tron": 3, "solana": 0.4}
# How far behind the node's tip the scan reads: load-balanced providers answer the tip from one backend and
# the block from another that has not got it yet (Ethereum's `null`, Solana's "block not available", Tron's
# empty answer). A block or two costs seconds on these networks; Bitcoin Core answers from one node.
DEFAULT_TIP_DELAY_BLOCKS: dict[str, int] = {"bitcoin": 0, "litecoin": 0, "ethereum": 1, "tron": 1, "solana": 2}
METRICS_PORTS: dict[str, int] = {"bitcoin": 9110, "litecoin": 9111, "ethereum": 9112, "tron": 9113, "solana": 9114}


class WatcherSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="WATCHER_", extra="ignore")

    network: Network
    service_name: str = ""  # watcher_<network>
    metrics_port: int | None = None  # 9110 + the network's position unless set

    bitcoin_rpc_url: str = "http://127.0.0.1:8332"
    bitcoin_rpc_user: str = ""
    bitcoin_rpc_password: str = ""
    # tcp://host:port of the node's zmqpubhashblock, listened to where the node refuses the RPC long poll
    bitcoin_zmq_url: str = ""
    litecoin_rpc_url: str = "http://127.0.0.1:9332"
    litecoin_rpc_user: str = ""
    litecoin_rpc_password: str = ""
    litecoin_zmq_url: str = ""
    ethereum_rpc_url: str = "http://127.0.0.1:8545"
    ethereum_ws_url: str = ""  # ws(s):// of the node, for eth_subscribe newHeads; empty: poll only
    tron_url: str = "http://127.0.0.1:8090"
    tron_api_key: str = ""  # a provider's key, sent as TRON-PRO-API-KEY
    tron_zmq_url: str = ""  # tcp://host:port of the node's built-in message queue (topic `block`); empty: poll only
    # The most blocks one eth_getLogs asks about (providers refuse wider ranges); a look over more is split.
    ethereum_logs_max_blocks: int = Field(1000, ge=1)
    # How long a block whose call traces failed (pruned state, a tracer timeout) is tried again before it is
    # scanned without them (internal ETH transfers in it then left to the balance check).
    ethereum_trace_retry_s: float = Field(120.0, ge=0)
    solana_rpc_url: str = "http://127.0.0.1:8899"
    solana_ws_url: str = ""  # ws(s):// of the node's PubSub port, for slotSubscribe; empty: poll only
    # Slots are counted on top of this commitment: "confirmed" plus 32 slots is
    # as safe as "finalized", and shows a payment as seen half a minute sooner.
    solana_commitment: Literal["confirmed", "finalized"] = "confirmed"
    # Slots whose blocks are on their way at once while the scan commits them in order: one mainnet block takes
    # a provider a good part of a slot's 400 ms to send, so one at a time falls behind the chain.
    solana_fetch_ahead_slots: int = Field(8, ge=1)

    bitcoin_confirmations: int = Field(DEFAULT_CONFIRMATIONS["bitcoin"], ge=1)
    litecoin_confirmations: int = Field(DEFAULT_CONFIRMATIONS["litecoin"], ge=1)
    ethereum_confirmations: int = Field(DEFAULT_CONFIRMATIONS["ethereum"], ge=1)
    tron_confirmations: int = Field(DEFAULT_CONFIRMATIONS["tron"], ge=1)
    solana_confirmations: int = Field(DEFAULT_CONFIRMATIONS["solana"], ge=1)

    bitcoin_lag_blocks: int = Field(DEFAULT_LAG_BLOCKS["bitcoin"], ge=1)
    litecoin_lag_blocks: int = Field(DEFAULT_LAG_BLOCKS["litecoin"], ge=1)
    ethereum_lag_blocks: int = Field(DEFAULT_LAG_BLOCKS["ethereum"], ge=1)
    tron_lag_blocks: int = Field(DEFAULT_LAG_BLOCKS["tron"], ge=1)
    solana_lag_blocks: int = Field(DEFAULT_LAG_BLOCKS["solana"], ge=1)
    # Seconds since the watcher last had every block of its node before it reports lagging.
    max_lag_seconds: int = Field(300, ge=1)
    bitcoin_tip_delay_blocks: int = Field(DEFAULT_TIP_DELAY_BLOCKS["bitcoin"], ge=0)
    litecoin_tip_delay_blocks: int = Field(DEFAULT_TIP_DELAY_BLOCKS["litecoin"], ge=0)
    ethereum_tip_delay_blocks: int = Field(DEFAULT_TIP_DELAY_BLOCKS["ethereum"], ge=0)
    tron_tip_delay_blocks: int = Field(DEFAULT_TIP_DELAY_BLOCKS["tron"], ge=0)
    solana_tip_delay_blocks: int = Field(DEFAULT_TIP_DELAY_BLOCKS["solana"], ge=0)

    poll_interval_s: float = Field(5.0, gt=0)
    standby_retry_s: float = Field(3.0, gt=0)
    status_interval_s: float = Field(5.0, gt=0)
    backoff_initial_s: float = Field(1.0, gt=0)
    backoff_max_s: float = Field(60.0, gt=0)
    rpc_timeout_s: float = Field(30.0, gt=0)
    payments_timeout_s: float = Field(30.0, gt=0)
    # How often every watched address's balance is compared with the transfers seen paying it (the backstop).
    balance_check_interval_s: float = Field(3600.0, gt=0)
    # Scanned blocks remembered to find the common ancestor after a reorganisation.
    history_blocks: int = Field(500, ge=10)
    # How far back a targeted look goes, in blocks (besides the mempool); the network's default unless set.
    targeted_check_blocks: int | None = Field(None, ge=1)
    # Where the first ever scan starts; the node's tip when unset.
    start_height: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _per_network_defaults(self) -> "WatcherSettings":
        self.service_name = self.service_name or f"watcher_{self.network}"
        if self.metrics_port is None:
            self.metrics_port = METRICS_PORTS[self.network]
        if self.targeted_check_blocks is None:
            self.targeted_check_blocks = DEFAULT_TARGETED_CHECK_BLOCKS[self.network]
        return self

    @property
    def confirmations(self) -> int:
        return getattr(self, f"{self.network}_confirmations")

    @property
    def lag_blocks(self) -> int:
        return getattr(self, f"{self.network}_lag_blocks")

    @property
    def tip_delay_blocks(self) -> int:
        return getattr(self, f"{self.network}_tip_delay_blocks")

    @property
    def lag_limits(self) -> Limits:
        return Limits(self.lag_blocks, self.max_lag_seconds, BLOCK_SECONDS[self.network])

    @property
    def block_notify_url(self) -> str:
        if self.network in ("ethereum", "solana"):
            return getattr(self, f"{self.network}_ws_url")
        return getattr(self, f"{self.network}_zmq_url")
