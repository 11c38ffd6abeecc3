"""Payments settings (PAYMENTS_*), validated at start.

The service never holds a private key: deposit addresses come from
account-level extended PUBLIC keys (BIP84 for BTC/LTC, BIP44 for ETH/TRON)
and, for Solana, from an operator-imported pool. A network without its key
is switched off (reason `disabled`), never given a made-up address; so is a network whose key is
unusable (account_keys.py). A private key or a seed phrase in a key setting stops the service at start.
"""

from datetime import timedelta
from fractions import Fraction
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from kernodeck_kit.settings import ServiceSettings
from kernodeck_payments.account_keys import key_problem, refuse_secrets
from kernodeck_payments.domain.methods import DEFAULT_CONFIRMATIONS

Chain = Literal["mainnet", "testnet", "regtest"]
DERIVED_NETWORKS = ("bitcoin", "litecoin", "ethereum", "tron")  # Solana's addresses come from a pool


class PaymentsSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="PAYMENTS_", extra="ignore")

    service_name: str = "payments"
    metrics_port: int = 9104

    # Which chain each network's addresses and tokens belong to.
    bitcoin_chain: Chain = "mainnet"
    litecoin_chain: Chain = "mainnet"
    ethereum_chain: Chain = "mainnet"
    tron_chain: Chain = "mainnet"
    solana_chain: Chain = "mainnet"
    # EIP-681 chain id in Ethereum payment URIs (1 = mainnet, 31337 = anvil).
    ethereum_chain_id: int = Field(1, ge=1)

    bitcoin_xpub: str = ""
    litecoin_xpub: str = ""
    ethereum_xpub: str = ""
    tron_xpub: str = ""

    # Token contracts; mainnet defaults are Tether's and Circle's own. Test
    # chains need them set explicitly.
    usdt_ethereum_contract: str = ""
    usdc_ethereum_contract: str = ""
    usdt_tron_contract: str = ""

    bitcoin_confirmations: int = Field(DEFAULT_CONFIRMATIONS["bitcoin"], ge=1)
    litecoin_confirmations: int = Field(DEFAULT_CONFIRMATIONS["litecoin"], ge=1)
    ethereum_confirmations: int = Field(DEFAULT_CONFIRMATIONS["ethereum"], ge=1)
    tron_confirmations: int = Field(DEFAULT_CONFIRMATIONS["tron"], ge=1)
    solana_confirmations: int = Field(DEFAULT_CONFIRMATIONS["solana"], ge=1)

    intent_ttl_minutes: int = Field(30, ge=1, le=24 * 60)
    # An order's intent never outlives the order (orders cancels it unpaid then); with less than this left, none.
    intent_shortest_minutes: int = Field(10, ge=1, le=24 * 60)
    # Open payments (instructions not yet expired, or a transfer in flight) one order, one account may hold:
    # each takes an address, so without a bound anyone could exhaust the Solana pool or the wallet's gap limit.
    open_intents_per_order: int = Field(3, ge=1)
    open_intents_per_account: int = Field(10, ge=1)
    # An account whose order intents expired unpaid this many times within the window holds no GPUs for a new
    # intent (HOLDS_COOLING_OFF) until the oldest of them leaves the window: each one held GPUs from everyone.
    expired_holds_limit: int = Field(6, ge=1)
    # Addresses one account may be given on one network within the window while nothing of their asset reached
    # them (429 too_many_requests beyond): each takes a Solana pool address or a derivation index for good.
    unfunded_addresses_per_network: int = Field(10, ge=1)
    unfunded_addresses_window_hours: int = Field(24, ge=1, le=24 * 30)
    expired_holds_window_hours: int = Field(24, ge=1, le=24 * 30)
    monitoring_window_days: int = Field(7, ge=1, le=90)

    # Comma-separated methods switched off until an operator turns them on, e.g. "USDT/tron,SOL/solana".
    disabled_methods: str = ""

    rate_sources: str = "kraken,coingecko"
    kraken_url: str = "https://api.kraken.com"
    coingecko_url: str = "https://api.coingecko.com"
    coinbase_url: str = "https://api.coinbase.com"
    rate_file: Path | None = None
    rate_timeout_s: float = Field(5.0, gt=0)
    rate_refresh_s: float = Field(30.0, gt=0)
    rate_max_age_s: int = Field(300, ge=10)
    # A stablecoin is priced at 1 USD while the market stays within this many percent of it.
    stablecoin_peg_guard_percent: str = "2"
    # A rate is quoted only when at least this many sources have a fresh one, no two of them further apart
    # than this many percent of the lower: one source alone (broken, or wrong) is never trusted.
    rate_min_sources: int = Field(2, ge=1)
    rate_max_spread_percent: str = "2"

    solana_pool_low: int = Field(20, ge=0)
    # How many unused addresses in a row the operator's wallet scans past (BIP44's gap limit is 20): funds
    # beyond it are not shown by the wallet. Reported as a metric; alerts compare the derivation index to it.
    wallet_gap_limit: int = Field(20, ge=1)
    # A watcher report older than this makes its network's methods unavailable (chain_lagging).
    watcher_stale_s: int = Field(300, ge=10)
    sweep_interval_s: float = Field(10.0, gt=0)

    @model_validator(mode="after")
    def _no_secrets(self) -> "PaymentsSettings":
        refuse_secrets(
            {f"PAYMENTS_{n.upper()}_XPUB": self.xpub(n) for n in ("bitcoin", "litecoin", "ethereum", "tron")}
        )
        return self

    @field_validator("stablecoin_peg_guard_percent", "rate_max_spread_percent")
    @classmethod
    def _percent(cls, value: str) -> str:
        if not 0 < Fraction(value) < 50:
            raise ValueError("a percentage between 0 and 50")
        return value

    def chain(self, network: str) -> str:
        return getattr(self, f"{network}_chain")

    def xpub(self, network: str) -> str:
        return getattr(self, f"{network}_xpub", "")

    def unusable_keys(self) -> dict[str, str]:
        """network -> why its configured account key gives no addresses (each logged once)."""
        return {
            network: problem
            for network in DERIVED_NETWORKS
            if (key := self.xpub(network)) and (problem := key_problem(network, key, self.chain(network)))
        }

    def confirmations(self, network: str) -> int:
        return getattr(self, f"{network}_confirmations")

    def token_overrides(self) -> dict[tuple[str, str], str]:
        pairs = {
            ("USDT", "ethereum"): self.usdt_ethereum_contract,
            ("USDC", "ethereum"): self.usdc_ethereum_contract,
            ("USDT", "tron"): self.usdt_tron_contract,
        }
        return {key: value for key, value in pairs.items() if value}

    def switched_off(self) -> set[tuple[str, str]]:
        pairs = (item.strip().split("/") for item in self.disabled_methods.split(",") if item.strip())
        return {(asset.upper(), network) for asset, network in pairs}

    @property
    def intent_ttl(self) -> timedelta:
        return timedelta(minutes=self.intent_ttl_minutes)

    @property
    def intent_shortest(self) -> timedelta:
        return timedelta(minutes=self.intent_shortest_minutes)

    @property
    def unfunded_addresses_window(self) -> timedelta:
        return timedelta(hours=self.unfunded_addresses_window_hours)

    @property
    def expired_holds_window(self) -> timedelta:
        return timedelta(hours=self.expired_holds_window_hours)

    @property
    def monitoring_window(self) -> timedelta:
        return timedelta(days=self.monitoring_window_days)

    @property
    def peg_guard(self) -> Fraction:
        return Fraction(self.stablecoin_peg_guard_percent) / 100

    @property
    def rate_max_spread(self) -> Fraction:
        return Fraction(self.rate_max_spread_percent) / 100
