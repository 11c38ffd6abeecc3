"""The local chains behind `make run` and the end-to-end tests, and the settings that point at them.

`Devnet.start()` starts, through infra/devnet, every node that is installed
(litecoind, Bitcoin Knots, anvil with the USDT and USDC test tokens, the Tron
double with a USDT, the Solana double) and returns the environment of the
watchers and of payments: WATCHER_<NET>_* node URLs and credentials (and
where the nodes announce blocks: bitcoind's ZMQ, anvil's websocket), the
test token contracts (PAYMENTS_* and WATCHER_* alike), the confirmations, and
PAYMENTS_DISABLED_METHODS for the networks whose node is missing, so that a
method nobody watches is never offered. `how_to_pay()` and `shell_env()` say
how to pay with the nodes' own tools.
"""

import contextlib
import hashlib
import shlex
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.devnet.nodes import AnvilNode, BitcoinNode, LitecoinNode, NodeError, NodeNotInstalled
from infra.local.stack import BIN

NETWORKS = ("bitcoin", "litecoin", "ethereum", "tron", "solana")
METHODS = {
    "bitcoin": ("BTC",),
    "litecoin": ("LTC",),
    "ethereum": ("ETH", "USDT", "USDC"),
    "tron": ("TRX", "USDT"),
    "solana": ("SOL",),
}
INSTALL = {
    "bitcoin": "infra/devnet/install.sh bitcoin",
    "litecoin": "infra/devnet/install.sh litecoin",
    "ethereum": "infra/devnet/install.sh anvil solc",
    "tron": "infra/devnet/install.sh anvil solc",
    "solana": "make install (the Python package solders)",
}
# Few confirmations, so that a test payment is paid within seconds (a block every 2 s on anvil,
# 3 s on the Tron double, 400 ms on the Solana double; Bitcoin and Litecoin mine on request).
DEV_CONFIRMATIONS = {"bitcoin": 2, "litecoin": 2, "ethereum": 2, "tron": 3, "solana": 10}
SOLANA_POOL_SIZE = 1000  # addresses are used once; make run keeps its payments database between runs


def dev_solana_addresses(count: int = SOLANA_POOL_SIZE) -> list[str]:
    """The same `count` deposit addresses every run: keys from public seeds, fine on a devnet only."""
    from solders.keypair import Keypair

    seeds = (hashlib.sha256(f"kernodeck-dev-solana-{i}".encode()).digest() for i in range(count))
    return [str(Keypair.from_seed(seed).pubkey()) for seed in seeds]


@dataclass
class Devnet:
    """The nodes of `networks`, with their data under `run_dir`; fresh chains every start."""

    run_dir: Path
    networks: tuple[str, ...] = NETWORKS
    confirmations: dict[str, int] = field(default_factory=lambda: dict(DEV_CONFIRMATIONS))
    anvil_block_time: int | None = None  # None: anvil mines each transaction at once
    tron_block_time: float = 3.0
    solana_block_time_ms: int = 400
    watcher_poll_s: float = 1.0
    watcher_status_s: float = 2.0
    nodes: dict[str, Any] = field(default_factory=dict)  # network -> the running node or double
    tokens: dict[str, str] = field(default_factory=dict)  # "USDT/ethereum" -> contract
    skipped: dict[str, str] = field(default_factory=dict)  # network -> why it is not running

    @property
    def up(self) -> tuple[str, ...]:
        return tuple(network for network in self.networks if network in self.nodes)

    def start(self, log=print) -> dict[str, str]:
        """Start every node of `networks` that can run (one line each to `log`); the settings."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            for network in self.networks:
                started = time.monotonic()
                try:
                    getattr(self, f"_start_{network}")()
                except Exception as error:  # one node that cannot run never stops the others
                    self.skipped[network] = _reason(network, error)
                    log(f"{network}: skipped, {self.skipped[network]}")
                    continue
                log(f"{network}: {self.describe(network)} ({time.monotonic() - started:.1f} s)")
        except BaseException:
            self.stop()
            raise
        return self.env()

    # -- one node each: a failure raises, the node is then not in `nodes` -----
    @staticmethod
    def _started(node):
        """`node` started, or stopped again (no half-started process left behind) and the error raised."""
        try:
            return node.start()
        except BaseException:
            with contextlib.suppress(Exception):
                node.stop()
            raise

    def _start_bitcoin(self) -> None:
        self.nodes["bitcoin"] = self._started(BitcoinNode(self.run_dir / "bitcoin"))

    def _start_litecoin(self) -> None:
        self.nodes["litecoin"] = self._started(LitecoinNode(self.run_dir / "litecoin"))

    def _start_ethereum(self) -> None:
        node = self._started(AnvilNode(self.run_dir / "anvil"))  # automine while the tokens deploy: no block waits
        self.nodes["ethereum"] = node
        try:
            from infra.devnet.tokens import deploy_tokens

            deployed = deploy_tokens(node)
            self.tokens.update({"USDT/ethereum": deployed["USDT"], "USDC/ethereum": deployed["USDC"]})
        except (NodeError, OSError) as error:  # no solcjs: ETH only, the tokens stay off
            self.skipped["ethereum tokens"] = str(error).splitlines()[0]
        if self.anvil_block_time:
            node.rpc("evm_setIntervalMining", self.anvil_block_time)

    def _start_tron(self) -> None:
        from infra.devnet.tron_double import TronDouble

        double = self._started(TronDouble(block_interval_s=self.tron_block_time))
        self.nodes["tron"] = double
        try:
            self.tokens["USDT/tron"] = double.deploy_trc20("USDT", 6, 10**15)
        except Exception as error:  # no solcjs: TRX only
            self.skipped["tron USDT"] = str(error).splitlines()[0]

    def _start_solana(self) -> None:
        from infra.devnet.solana_double import SolanaDouble

        self.nodes["solana"] = SolanaDouble(block_time_ms=self.solana_block_time_ms).start()

    def stop(self) -> None:
        for network in reversed(list(self.nodes)):
            with contextlib.suppress(Exception):
                self.nodes.pop(network).stop()

    # -- settings ----------------------------------------------------------
    def env(self) -> dict[str, str]:
        """The watchers' and payments' settings for the running nodes."""
        env = {
            "WATCHER_POLL_INTERVAL_S": str(self.watcher_poll_s),
            "WATCHER_STATUS_INTERVAL_S": str(self.watcher_status_s),
            # A watcher started with payments retries at the poll pace while payments comes up.
            "WATCHER_BACKOFF_INITIAL_S": str(self.watcher_poll_s),
        }
        for network in self.up:
            node, key = self.nodes[network], network.upper()
            if network in ("bitcoin", "litecoin"):
                env[f"WATCHER_{key}_RPC_URL"] = node.rpc_url
                env[f"WATCHER_{key}_RPC_USER"] = node.rpcuser
                env[f"WATCHER_{key}_RPC_PASSWORD"] = node.rpcpassword
                env[f"WATCHER_{key}_ZMQ_URL"] = node.zmq_hashblock_url or ""
            elif network == "ethereum":
                env["WATCHER_ETHEREUM_RPC_URL"] = node.rpc_url
                env["WATCHER_ETHEREUM_WS_URL"] = node.ws_url
            elif network == "tron":
                env["WATCHER_TRON_URL"] = node.url
            else:
                env["WATCHER_SOLANA_RPC_URL"] = node.url
            if network in self.confirmations:
                env[f"PAYMENTS_{key}_CONFIRMATIONS"] = env[f"WATCHER_{key}_CONFIRMATIONS"] = str(
                    self.confirmations[network]
                )
        for method, contract in self.tokens.items():
            asset, network = method.split("/")
            env[f"PAYMENTS_{asset}_{network.upper()}_CONTRACT"] = contract
            env[f"WATCHER_{asset}_{network.upper()}_CONTRACT"] = contract
        # Nobody watches a network whose node is not running: its methods are switched off.
        off = [f"{asset}/{network}" for network in NETWORKS if network not in self.up for asset in METHODS[network]]
        env["PAYMENTS_DISABLED_METHODS"] = ",".join(off)
        return env

    def import_solana_pool(self, env: dict[str, str]) -> str:
        """Give payments (its database as `env` says) the dev Solana deposit addresses; the admin's answer, one line."""
        if "solana" not in self.nodes:
            return ""
        pool = self.run_dir / "solana-pool.txt"
        pool.write_text("\n".join(dev_solana_addresses()) + "\n")
        done = subprocess.run(
            [str(BIN / "kernodeck-payments-admin"), "import-solana-addresses", str(pool)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:  # SOL then stays unavailable (address_pool_empty); the rest runs
            return f"importing the dev deposit addresses failed: {(done.stderr.strip() or '?').splitlines()[-1]}"
        return done.stdout.strip().splitlines()[-1]

    def reset_watcher_databases(self, data_dir: Path) -> None:
        """The chains start fresh: the watchers' SQLite files (cursors of the old chains) go too."""
        for network in self.up:
            for path in data_dir.glob(f"watcher_{network}.db*"):
                path.unlink()

    # -- paying by hand ----------------------------------------------------
    def describe(self, network: str) -> str:
        node = self.nodes[network]
        if network in ("bitcoin", "litecoin"):
            notify = f", ZMQ {node.zmq_hashblock_url}" if node.zmq_hashblock_url else ""
            return f"{node.rpc_url} regtest{notify}"
        if network == "ethereum":
            tokens = ", USDT and USDC deployed" if "USDT/ethereum" in self.tokens else ""
            return f"anvil {node.rpc_url}, chain id {node.chain_id}, newHeads {node.ws_url}{tokens}"
        if network == "tron":
            token = ", USDT deployed" if "USDT/tron" in self.tokens else ""
            return f"Tron double {node.url}{token}"
        return f"Solana double {node.url}"

    def shell_env(self) -> dict[str, str]:
        """KEY=VALUE for a second terminal: the CLIs, datadirs, RPC URLs, dev accounts and contracts."""
        out: dict[str, str] = {}
        for network in self.up:
            node = self.nodes[network]
            if network in ("bitcoin", "litecoin"):
                out.update(node.env(network.upper()))
            elif network == "ethereum":
                out.update(node.env("ETHEREUM"))
                for asset in ("USDT", "USDC"):
                    if f"{asset}/ethereum" in self.tokens:
                        out[f"ETHEREUM_{asset}_CONTRACT"] = self.tokens[f"{asset}/ethereum"]
            elif network == "tron":
                out["TRON_HTTP_URL"] = node.url
                out["TRON_DEV_ADDRESS"] = node.accounts[0]
                if "USDT/tron" in self.tokens:
                    out["TRON_USDT_CONTRACT"] = self.tokens["USDT/tron"]
            else:
                out["SOLANA_RPC_URL"] = node.url
        return out

    def write_shell_env(self, path: Path, extra: dict[str, str] | None = None) -> None:
        lines = [
            f"# Written by `make run` while it runs: . {path.name} in another terminal (README: Pay a test order)."
        ]
        lines += [f"{key}={shlex.quote(value)}" for key, value in {**(extra or {}), **self.shell_env()}.items()]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        path.chmod(0o600)

    def how_to_pay(self) -> str:
        """The commands that pay a test order's ADDRESS and AMOUNT (as payment instructions show them)."""
        lines = ["Pay a test order with the nodes' own tools (ADDRESS, AMOUNT, BASE_UNITS: from the payment):"]
        for network in self.up:
            node, needed = self.nodes[network], self.confirmations.get(network)
            if network in ("bitcoin", "litecoin"):
                cli = shlex.join(node.cli_argv())
                lines.append(f"  {network}: {cli} sendtoaddress ADDRESS AMOUNT")
                lines.append(f"  {' ' * len(network)}  then mine: {cli} -generate {needed or 6}")
            elif network == "ethereum":
                tx = f'{{"from":"{node.accounts[0]}","to":"ADDRESS","value":"0xBASE_UNITS_IN_HEX"}}'
                body = f'{{"jsonrpc":"2.0","id":1,"method":"eth_sendTransaction","params":[{tx}]}}'
                lines.append(f"  ethereum: curl -s {node.rpc_url} -H 'content-type: application/json' -d '{body}'")
                mining = f"a block every {self.anvil_block_time:g} s" if self.anvil_block_time else "one block per tx"
                lines.append(f"            ({mining}; USDT/USDC: README, Pay a test order)")
            elif network == "tron":
                body = '{"to": "ADDRESS", "amount": BASE_UNITS}'
                lines.append(
                    f"  tron: curl -s {node.url}/double/transfer -d '{body}'   (a block every {self.tron_block_time:g} s)"
                )
            else:
                body = '{"jsonrpc":"2.0","id":1,"method":"requestAirdrop","params":["ADDRESS", BASE_UNITS]}'
                lines.append(f"  solana: curl -s {node.url} -H 'content-type: application/json' -d '{body}'")
        for network, why in self.skipped.items():
            lines.append(f"  {network}: not running ({why})")
        return "\n".join(lines)


def _reason(network: str, error: Exception) -> str:
    if isinstance(error, NodeNotInstalled):
        return f"not installed: run {INSTALL[network]}"
    if isinstance(error, ImportError):
        return f"{error}: run {INSTALL[network]}"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def configured_watchers(environ: dict[str, str], networks: Iterable[str] = NETWORKS) -> tuple[str, ...]:
    """Outside the devnet: a watcher for each network whose node URL is set (WATCHER_BITCOIN_RPC_URL...)."""
    keys = {"tron": "WATCHER_TRON_URL"}
    return tuple(n for n in networks if environ.get(keys.get(n, f"WATCHER_{n.upper()}_RPC_URL")))
