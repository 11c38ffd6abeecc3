"""The local chains behind `make run` and the end-to-end tests, and the settings that point at them.

`Devnet.start()` starts, through infra/devnet, every node that is installed
(litecoind, Bitcoin Knots, anvil with the USDT and USDC test tokens, the Tron
double with a USDT, the Solana double) and returns the environment of the
watchers and of payments: WATCHER_<NET>_* node URLs and credentials (and
where the nodes announce blocks: bitcoind's ZMQ, anvil's websocket, the Tron
double's ZMQ `block` topic, the Solana double's PubSub websocket), the
payments' test token contracts, the confirmations, and
PAYMENTS_DISABLED_METHODS for the networks whose node is missing, so that a
method nobody watches is never offered. `how_to_pay()` and `shell_env()` say
how to pay with the nodes' own tools.
"""

import contextlib
import hashlib
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from infra.devnet.nodes import AnvilNode, BitcoinNode, LitecoinNode, NodeError
from infra.local.stack import BIN
from kernodeck_payments.domain.methods import METHODS

# The watcher setting that names each network's node, in the order the nodes start.
NODE_URL_KEYS = {
    "bitcoin": "WATCHER_BITCOIN_RPC_URL",
    "litecoin": "WATCHER_LITECOIN_RPC_URL",
    "ethereum": "WATCHER_ETHEREUM_RPC_URL",
    "tron": "WATCHER_TRON_URL",
    "solana": "WATCHER_SOLANA_RPC_URL",
}
NETWORKS = tuple(NODE_URL_KEYS)
TRON_BLOCK_S = 3.0
SOLANA_BLOCK_MS = 400
# Few confirmations, so that a test payment is paid within seconds (a block every 2 s on anvil under
# `make run`, TRON_BLOCK_S and SOLANA_BLOCK_MS on the doubles; Bitcoin and Litecoin mine on request).
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
    anvil_block_time: int | None = None  # None: anvil mines each transaction at once
    clocked_doubles: bool = True  # the Tron and Solana doubles make blocks on their clocks; False: on request
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
                    self.skipped[network] = _reason(error)
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

        double = self._started(TronDouble(block_interval_s=TRON_BLOCK_S if self.clocked_doubles else None))
        self.nodes["tron"] = double
        try:
            self.tokens["USDT/tron"] = double.deploy_trc20("USDT", 6, 10**15)
        except Exception as error:  # no solcjs: TRX only
            self.skipped["tron USDT"] = str(error).splitlines()[0]

    def _start_solana(self) -> None:
        from infra.devnet.solana_double import SolanaDouble

        clock = SOLANA_BLOCK_MS if self.clocked_doubles else None
        self.nodes["solana"] = self._started(SolanaDouble(block_time_ms=clock))

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
            env[NODE_URL_KEYS[network]] = node.url if network in ("tron", "solana") else node.rpc_url
            if network in ("bitcoin", "litecoin"):
                env[f"WATCHER_{key}_RPC_USER"] = node.rpcuser
                env[f"WATCHER_{key}_RPC_PASSWORD"] = node.rpcpassword
                env[f"WATCHER_{key}_ZMQ_URL"] = node.zmq_hashblock_url or ""
            elif network in ("ethereum", "solana"):
                env[f"WATCHER_{key}_WS_URL"] = node.ws_url
            else:
                env["WATCHER_TRON_ZMQ_URL"] = node.events_url
            env[f"PAYMENTS_{key}_CONFIRMATIONS"] = env[f"WATCHER_{key}_CONFIRMATIONS"] = str(DEV_CONFIRMATIONS[network])
            env[f"WATCHER_{key}_TIP_DELAY_BLOCKS"] = "0"  # one local node, no backends racing at the tip
        for method, contract in self.tokens.items():
            asset, network = method.split("/")
            env[f"PAYMENTS_{asset}_{network.upper()}_CONTRACT"] = contract
        # Nobody watches a network whose node is not running: its methods are switched off.
        off = [f"{method.asset}/{method.network}" for method in METHODS if method.network not in self.up]
        env["PAYMENTS_DISABLED_METHODS"] = ",".join(off)
        return env

    def import_solana_pool(self, env: dict[str, str]) -> str:
        """Give payments (its database as `env` says) the dev Solana deposit addresses; the admin's answer, one line."""
        if "solana" not in self.nodes:
            return ""
        pool = self.run_dir / "solana-pool.txt"
        pool.write_text("\n".join(dev_solana_addresses()) + "\n")
        done = subprocess.run(
            [str(BIN / "kernodeck-admin"), "payments", "import-solana-addresses", str(pool)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:  # SOL then stays unavailable (address_pool_empty); the rest runs
            return f"importing the dev deposit addresses failed: {(done.stderr.strip() or '?').splitlines()[-1]}"
        return done.stdout.strip().splitlines()[-1]

    def reset_watcher_databases(self, data_dir: Path) -> dict[str, str]:
        """The chains start fresh: the watchers' SQLite files (cursors of the old chains) go too. A watcher refuses
        an empty database while payments (whose database stays) still watches addresses of the old chains unless
        told where to start: the settings that say so (the new chains' first block)."""
        for network in self.up:
            for path in data_dir.glob(f"watcher_{network}.db*"):
                path.unlink()
        return {f"WATCHER_{network.upper()}_START_HEIGHT": "0" for network in self.up}

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
            return f"Tron double {node.url}, blocks on ZMQ {node.events_url}{token}"
        return f"Solana double {node.url}, slotSubscribe {node.ws_url}"

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
            node = self.nodes[network]
            if network in ("bitcoin", "litecoin"):
                cli = shlex.join(node.cli_argv())
                lines.append(f"  {network}: {cli} sendtoaddress ADDRESS AMOUNT")
                lines.append(f"  {' ' * len(network)}  then mine: {cli} -generate {DEV_CONFIRMATIONS[network]}")
            elif network == "ethereum":
                tx = f'{{"from":"{node.accounts[0]}","to":"ADDRESS","value":"0xBASE_UNITS_IN_HEX"}}'
                body = f'{{"jsonrpc":"2.0","id":1,"method":"eth_sendTransaction","params":[{tx}]}}'
                lines.append(f"  ethereum: curl -s {node.rpc_url} -H 'content-type: application/json' -d '{body}'")
                mining = f"a block every {self.anvil_block_time:g} s" if self.anvil_block_time else "one block per tx"
                lines.append(f"            ({mining}; USDT/USDC: README, Pay a test order)")
            elif network == "tron":
                body = '{"to": "ADDRESS", "amount": BASE_UNITS}'
                lines.append(
                    f"  tron: curl -s {node.url}/double/transfer -d '{body}'   (a block every {TRON_BLOCK_S:g} s)"
                )
            else:
                body = '{"jsonrpc":"2.0","id":1,"method":"requestAirdrop","params":["ADDRESS", BASE_UNITS]}'
                lines.append(f"  solana: curl -s {node.url} -H 'content-type: application/json' -d '{body}'")
        for network, why in self.skipped.items():
            lines.append(f"  {network}: not running ({why})")
        return "\n".join(lines)


def _reason(error: Exception) -> str:
    """Why a node did not start, in one line; a missing node's error names the command that installs it."""
    if isinstance(error, ImportError):  # the Solana double's solders
        return f"{error}: run make install"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def configured_watchers(environ: dict[str, str]) -> tuple[str, ...]:
    """Outside the devnet: a watcher for each network whose node URL is set (WATCHER_BITCOIN_RPC_URL...)."""
    return tuple(network for network, key in NODE_URL_KEYS.items() if environ.get(key))
