"""Start and stop local development chain nodes (stdlib only).

Nodes (install them with ``infra/devnet/install.sh``):

* :class:`LitecoinNode` -- Debian's ``litecoind`` in regtest
* :class:`BitcoinNode`  -- Bitcoin Knots (Debian sid, run with sid's loader) in regtest
* :class:`AnvilNode`    -- ``anvil`` (npm ``@foundry-rs/anvil``), chain id 31337

Each is a context manager::

    with LitecoinNode() as ltc:
        addr = ltc.rpc("getnewaddress", "", "bech32")
        txid = ltc.rpc("sendtoaddress", addr, 1.5)

CLI for ``make run``::

    python -m infra.devnet.nodes up      # or: python infra/devnet/nodes.py up

starts every installed node, writes ``infra/devnet/.run/nodes.env`` and runs
until Ctrl-C.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import ctypes
import itertools
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NODES_DIR = Path(os.environ.get("KERNODECK_DEVNET_NODES", HERE / ".nodes"))
BIN_DIR = NODES_DIR / "bin"
RUN_DIR = HERE / ".run"

__all__ = [
    "AnvilNode",
    "BitcoinNode",
    "LitecoinNode",
    "NodeError",
    "NodeNotInstalled",
    "RPCError",
    "find_binary",
    "free_port",
]


class NodeError(RuntimeError):
    """A node failed to start, answer or stop."""


class NodeNotInstalled(NodeError):
    """The node's binary is not installed (run infra/devnet/install.sh)."""


class RPCError(NodeError):
    """A JSON-RPC call returned an error object."""

    def __init__(self, method: str, error: Any):
        self.method = method
        self.error = error
        self.code = error.get("code") if isinstance(error, dict) else None
        msg = error.get("message") if isinstance(error, dict) else error
        super().__init__(f"{method}: {msg} (code {self.code})")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_binary(name: str, *extra: str | Path) -> Path | None:
    """``.nodes/bin/<name>``, then the extra candidates, then ``$PATH``."""
    for cand in (BIN_DIR / name, *map(Path, extra)):
        if cand.is_file() and os.access(cand, os.X_OK):
            return cand
    found = shutil.which(name)
    return Path(found) if found else None


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """preexec_fn: the node gets SIGTERM if the process that started it dies."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _json_rpc(
    url: str,
    method: str,
    params: list,
    *,
    auth: tuple[str, str] | None = None,
    version: str = "1.0",
    timeout: float = 60.0,
) -> Any:
    body = json.dumps({"jsonrpc": version, "id": next(_ids), "method": method, "params": params}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    if auth:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            reply = json.loads(resp.read())
    except urllib.error.HTTPError as e:
        # bitcoind answers RPC errors with HTTP 500 (or 404) and a JSON body
        raw = e.read()
        try:
            reply = json.loads(raw)
        except ValueError:
            raise NodeError(f"{method}: HTTP {e.code} {raw[:200]!r}") from None
    if reply.get("error"):
        raise RPCError(method, reply["error"])
    return reply.get("result")


_ids = itertools.count(1)


class _Process:
    """A child process with a log file, shared by all node kinds."""

    name = "node"

    def __init__(self, workdir: str | Path | None):
        self._own_workdir = workdir is None
        if workdir is None:
            workdir = tempfile.mkdtemp(prefix=f"kernodeck-{self.name}-")
        self.workdir = Path(workdir)
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / f"{self.name}.log"
        self.started_in: float | None = None  # seconds from spawn to ready (wallet + blocks included)

    def _spawn(self, argv: list[str]) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")  # noqa: SIM115 - kept open for the child's lifetime
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # Ctrl-C in a terminal goes to us, not to the node
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
            )
        finally:
            log.close()

    def _launch_or_terminate(self, launch, taken_port_says: str | None = None) -> None:
        """`launch()` starts the node; when it fails, the node is terminated. With `taken_port_says`,
        `launch()` picks free ports and is tried three times, as a port picked free can be taken before
        the node binds it (the node then exits, its log saying `taken_port_says`)."""
        tries = 1 if taken_port_says is None else 3
        for attempt in range(1, tries + 1):
            try:
                launch()
                return
            except NodeError:
                if (
                    attempt < tries
                    and self.proc is not None
                    and self.proc.poll() is not None
                    and taken_port_says in self.log_tail(10).lower()
                ):
                    continue
                self._terminate(5)
                raise

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _check_alive(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise NodeError(f"{self.name} exited with code {self.proc.returncode}:\n{self.log_tail()}")

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _terminate(self, timeout: float) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def _cleanup(self) -> None:
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def stop(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class _BitcoinLikeNode(_Process):
    """bitcoind-style node in regtest (shared by Litecoin and Bitcoin)."""

    name = "bitcoind"
    daemon = "bitcoind"
    cli = "bitcoin-cli"
    daemon_extra: tuple[str, ...] = ()
    install_hint = "infra/devnet/install.sh"

    def __init__(
        self,
        workdir: str | Path | None = None,
        *,
        wallet: str = "dev",
        blocks: int = 101,
        zmq: bool = True,
        fallbackfee: str = "0.0002",
        extra_args: tuple[str, ...] = (),
        fresh: bool = True,
    ):
        """workdir: folder for the datadir and log (a temp dir, removed on stop, when None).
        wallet: name of the wallet created (or loaded) at start; None for no wallet.
        blocks: mine until the chain is at least this high (101: coinbase spendable).
        zmq: enable zmqpubhashblock (ignored, with zmq_hashblock_url None, when the
        binary has no ZMQ support: Debian's litecoind has none).
        fresh: wipe an existing datadir first."""
        super().__init__(workdir)
        self.wallet = wallet
        self.blocks = blocks
        self.want_zmq = zmq
        self.fallbackfee = fallbackfee
        self.extra_args = tuple(extra_args)
        self.fresh = fresh
        self.datadir = self.workdir / "data"
        self.rpcuser = "kd" + secrets.token_hex(4)
        self.rpcpassword = secrets.token_urlsafe(18)
        self.rpc_port: int | None = None
        self.zmq_port: int | None = None
        self.binary = self.find()
        self.cli_binary = find_binary(self.cli, *self.cli_candidates())
        self._wallet_open = False

    # -- discovery ---------------------------------------------------------
    @classmethod
    def candidates(cls) -> tuple[str, ...]:
        return ()

    @classmethod
    def cli_candidates(cls) -> tuple[str, ...]:
        return ()

    @classmethod
    def find(cls) -> Path | None:
        return find_binary(cls.daemon, *cls.candidates())

    @classmethod
    def installed(cls) -> bool:
        return cls.find() is not None

    _zmq_support: dict[str, bool] = {}

    def has_zmq(self) -> bool:
        key = str(self.binary)
        if key not in self._zmq_support:
            out = subprocess.run([key, "-help"], capture_output=True, text=True, timeout=60).stdout
            self._zmq_support[key] = "-zmqpubhashblock" in out
        return self._zmq_support[key]

    # -- endpoints ---------------------------------------------------------
    @property
    def rpc_url(self) -> str:
        return f"http://127.0.0.1:{self.rpc_port}"

    @property
    def rpc_url_with_auth(self) -> str:
        return f"http://{self.rpcuser}:{self.rpcpassword}@127.0.0.1:{self.rpc_port}"

    @property
    def wallet_url(self) -> str:
        return f"{self.rpc_url}/wallet/{self.wallet}"

    @property
    def zmq_hashblock_url(self) -> str | None:
        return f"tcp://127.0.0.1:{self.zmq_port}" if self.zmq_port else None

    def cli_argv(self) -> list[str]:
        """argv prefix for the node's own CLI (``bitcoin-cli`` / ``litecoin-cli``)."""
        argv = [str(self.cli_binary or self.cli), f"-datadir={self.datadir}"]
        if self.wallet:
            argv.append(f"-rpcwallet={self.wallet}")
        return argv

    # -- lifecycle ---------------------------------------------------------
    def _write_conf(self) -> None:
        lines = [
            "regtest=1",
            "server=1",
            "txindex=1",
            f"fallbackfee={self.fallbackfee}",
            "listen=0",
            "dnsseed=0",
            "upnp=0",
            "printtoconsole=1",
            "[regtest]",
            f"rpcport={self.rpc_port}",
            "rpcbind=127.0.0.1",
            "rpcallowip=127.0.0.1",
            f"rpcuser={self.rpcuser}",
            f"rpcpassword={self.rpcpassword}",
            # Each watcher replica without ZMQ holds one thread in its waitforblockheight long poll:
            # Knots' default, where litecoind has 4.
            "rpcthreads=16",
        ]
        if self.zmq_port:
            lines.append(f"zmqpubhashblock=tcp://127.0.0.1:{self.zmq_port}")
        conf = self.datadir / self.conf_name
        conf.write_text("\n".join(lines) + "\n")
        conf.chmod(0o600)

    conf_name = "bitcoin.conf"

    def start(self, timeout: float = 120.0):
        if self.binary is None:
            raise NodeNotInstalled(f"{self.daemon} is not installed: run {self.install_hint}")
        if self.running:
            return self
        t0 = time.monotonic()
        if self.fresh and self.datadir.exists():
            shutil.rmtree(self.datadir)
        self.datadir.mkdir(parents=True, exist_ok=True)
        use_zmq = self.want_zmq and self.has_zmq()

        def launch() -> None:
            self.rpc_port = free_port()
            self.zmq_port = free_port() if use_zmq else None
            self._launch(timeout)

        self._launch_or_terminate(launch, "bind")
        if self.wallet:
            self._open_wallet()
            height = self.rpc("getblockcount")
            balance = float(self.rpc("getbalance"))
            if height < self.blocks or balance == 0:
                self.mine(max(self.blocks - height, 101 if balance == 0 else 0))
        self.started_in = time.monotonic() - t0
        return self

    def _launch(self, timeout: float) -> None:
        self._write_conf()
        self._spawn(
            [
                str(self.binary),
                f"-datadir={self.datadir}",
                f"-conf={self.datadir / self.conf_name}",
                *self.daemon_extra,
                *self.extra_args,
            ]
        )
        self.wait_ready(timeout)

    def restart(self, timeout: float = 120.0):
        """Stop the node if it runs, then start it again on the same ports and datadir (clients' settings
        stay valid). Its chain and wallet survive a `stop()` only in a workdir of the caller's."""
        self._shutdown(60.0)
        self._launch_or_terminate(lambda: self._launch(timeout))
        if self.wallet:
            self._open_wallet()
        return self

    def _open_wallet(self) -> None:
        if self.wallet not in self.rpc("listwallets"):
            try:
                self.rpc("loadwallet", self.wallet)
            except RPCError:
                self.rpc("createwallet", self.wallet)
        self._wallet_open = True

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Block until the RPC answers ``getblockchaininfo``."""
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                self._call(self.rpc_url, "getblockchaininfo", [], timeout=5)
                return
            except (OSError, NodeError) as e:  # refused, warming up (-28), ...
                last = e
                time.sleep(0.05)
        raise NodeError(f"{self.name} not ready after {timeout}s: {last}\n{self.log_tail()}")

    def _call(self, url: str, method: str, params: list, timeout: float = 120.0) -> Any:
        return _json_rpc(url, method, params, auth=(self.rpcuser, self.rpcpassword), timeout=timeout)

    def rpc(self, method: str, *params: Any, wallet: str | None = None) -> Any:
        """JSON-RPC call.  Once the node's wallet is open, calls go to its
        ``/wallet/<name>`` endpoint (node methods work there too); ``wallet``
        picks another loaded wallet."""
        name = wallet or (self.wallet if self._wallet_open else None)
        url = f"{self.rpc_url}/wallet/{name}" if name else self.rpc_url
        return self._call(url, method, list(params))

    def mine(self, n: int = 1, address: str | None = None) -> list[str]:
        """Mine n blocks to address (default: a new address of the node's wallet)."""
        if address is None:
            address = self.rpc("getnewaddress")
        return self.rpc("generatetoaddress", n, address)

    def stop(self, timeout: float = 60.0) -> None:
        self._shutdown(timeout)
        self._cleanup()

    def _shutdown(self, timeout: float) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(Exception):
                self._call(self.rpc_url, "stop", [], timeout=10)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._terminate(10)
        self.proc = None
        self._wallet_open = False

    def env(self, prefix: str) -> dict[str, str]:
        """KEY=VALUE settings for nodes.env."""
        out = {
            f"{prefix}_RPC_URL": self.rpc_url,
            f"{prefix}_RPC_USER": self.rpcuser,
            f"{prefix}_RPC_PASSWORD": self.rpcpassword,
            f"{prefix}_RPC_URL_WITH_AUTH": self.rpc_url_with_auth,
            f"{prefix}_NETWORK": "regtest",
            f"{prefix}_DATADIR": str(self.datadir),
            f"{prefix}_CLI": str(self.cli_binary or self.cli),
        }
        if self.wallet:
            out[f"{prefix}_WALLET"] = self.wallet
            out[f"{prefix}_WALLET_URL"] = self.wallet_url
        if self.zmq_hashblock_url:
            out[f"{prefix}_ZMQ_HASHBLOCK"] = self.zmq_hashblock_url
        return out


class LitecoinNode(_BitcoinLikeNode):
    """Debian 12's ``litecoind`` (Litecoin Core 0.21) in regtest. No ZMQ support in that build."""

    name = "litecoin"
    daemon = "litecoind"
    cli = "litecoin-cli"
    conf_name = "litecoin.conf"
    install_hint = "infra/devnet/install.sh litecoin"

    @classmethod
    def candidates(cls) -> tuple[str, ...]:
        # the real daemon; /usr/bin/litecoind is a wrapper that writes ~/.litecoin
        return ("/usr/lib/litecoin/litecoind",)

    @classmethod
    def cli_candidates(cls) -> tuple[str, ...]:
        return ("/usr/bin/litecoin-cli",)

    MWEB_HEIGHT = 432  # regtest activates MWEB at the first block after 431 that holds a peg-in

    def activate_mweb(self) -> None:
        """Activate MWEB (as on Litecoin mainnet since 2022), the way Litecoin's own functional tests do:
        mine to height 431, peg some coins in, mine the activating block. A node already past it stays."""
        if self.rpc("getblockcount") >= self.MWEB_HEIGHT:
            return
        self.mine(self.MWEB_HEIGHT - 1 - self.rpc("getblockcount"))
        self.rpc("sendtoaddress", self.rpc("getnewaddress", "", "mweb"), "1")
        self.mine(1)


class BitcoinNode(_BitcoinLikeNode):
    """Bitcoin Knots (Debian sid) in regtest, via the wrapper in ``.nodes/bin``."""

    name = "bitcoin"
    daemon = "bitcoind"
    cli = "bitcoin-cli"
    conf_name = "bitcoin.conf"
    install_hint = "infra/devnet/install.sh bitcoin"

    @classmethod
    def find(cls) -> Path | None:
        # Only the project's own install (not some bitcoind on $PATH).
        cand = BIN_DIR / cls.daemon
        return cand if cand.is_file() and os.access(cand, os.X_OK) else None


class SentInOneBlock(list):
    """Transaction hashes sent while a block is held (AnvilNode.one_block), and their receipts once it is mined."""

    receipts: list[dict]


class AnvilNode(_Process):
    """``anvil`` (Foundry) on a free port; automine unless ``block_time`` is given."""

    name = "anvil"
    chain_id = 31337
    install_hint = "infra/devnet/install.sh anvil"

    def __init__(
        self,
        workdir: str | Path | None = None,
        *,
        block_time: float | None = None,
        chain_id: int = 31337,
        accounts: int = 10,
        balance_eth: int = 10000,
        extra_args: tuple[str, ...] = (),
    ):
        super().__init__(workdir)
        self.block_time = block_time
        self.chain_id = chain_id
        self.n_accounts = accounts
        self.balance_eth = balance_eth
        self.extra_args = tuple(extra_args)
        self.port: int | None = None
        self.binary = self.find()
        self.config_path = self.workdir / "anvil.json"
        self.accounts: list[str] = []
        self.private_keys: list[str] = []

    @classmethod
    def find(cls) -> Path | None:
        return find_binary("anvil")

    @classmethod
    def installed(cls) -> bool:
        return cls.find() is not None

    @property
    def rpc_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        """The same port answers websocket upgrades (eth_subscribe)."""
        return f"ws://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0):
        if self.binary is None:
            raise NodeNotInstalled(f"anvil is not installed: run {self.install_hint}")
        if self.running:
            return self
        t0 = time.monotonic()

        def launch() -> None:
            self.port = free_port()
            self.config_path.unlink(missing_ok=True)
            self._launch(timeout)

        self._launch_or_terminate(launch, "address")
        self.accounts = self.rpc("eth_accounts")
        self.private_keys = self._config_keys(until=t0 + timeout)
        self.started_in = time.monotonic() - t0
        return self

    def _config_keys(self, until: float) -> list[str]:
        """The dev accounts' keys from `--config-out`, which anvil may still be writing when it answers RPC: read
        again until it holds a key for every account (or the start's time is up: then what it holds)."""
        keys: list[str] = []
        while True:
            with contextlib.suppress(OSError, ValueError):
                keys = list(json.loads(self.config_path.read_text()).get("private_keys", []))
            if len(keys) >= len(self.accounts) or time.monotonic() > until:
                return keys
            time.sleep(0.05)

    def _launch(self, timeout: float) -> None:
        argv = [
            str(self.binary),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--chain-id",
            str(self.chain_id),
            "--accounts",
            str(self.n_accounts),
            "--balance",
            str(self.balance_eth),
            "--config-out",
            str(self.config_path),
        ]
        if self.block_time is not None:
            argv += ["--block-time", str(self.block_time)]
        self._spawn([*argv, *self.extra_args])
        self.wait_ready(timeout)

    def restart(self, timeout: float = 60.0):
        """Stop anvil if it runs, then start it again on the same port. The chain survives only through a
        state file in `extra_args` (``--state PATH``: anvil dumps it on SIGTERM and loads it at start)."""
        self._terminate(30)
        self._launch_or_terminate(lambda: self._launch(timeout))
        return self

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                _json_rpc(self.rpc_url, "eth_chainId", [], version="2.0", timeout=5)
                return
            except (OSError, NodeError) as e:
                last = e
                time.sleep(0.05)
        raise NodeError(f"anvil not ready after {timeout}s: {last}\n{self.log_tail()}")

    def rpc(self, method: str, *params: Any) -> Any:
        return _json_rpc(self.rpc_url, method, list(params), version="2.0")

    def wait_receipt(self, tx_hash: str, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            receipt = self.rpc("eth_getTransactionReceipt", tx_hash)
            if receipt:
                return receipt
            time.sleep(0.05)
        raise NodeError(f"no receipt for {tx_hash} after {timeout}s")

    @contextlib.contextmanager
    def one_block(self) -> Iterator[SentInOneBlock]:
        """`with anvil.one_block() as sent: sent.append(send(...))` mines those transactions in one block and
        leaves their receipts, in order, in `sent.receipts`."""
        sent = SentInOneBlock()
        self.rpc("evm_setAutomine", False)
        try:
            yield sent
            self.rpc("evm_mine")
        finally:
            self.rpc("evm_setAutomine", True)
        sent.receipts = [self.wait_receipt(h) for h in sent]
        assert len({r["blockHash"] for r in sent.receipts}) <= 1, "the transactions landed in several blocks"

    def stop(self, timeout: float = 30.0) -> None:
        self._terminate(timeout)
        self.proc = None
        self._cleanup()

    def env(self, prefix: str = "ETHEREUM") -> dict[str, str]:
        out = {
            f"{prefix}_RPC_URL": self.rpc_url,
            f"{prefix}_WS_URL": self.ws_url,
            f"{prefix}_CHAIN_ID": str(self.chain_id),
        }
        if self.accounts:
            out[f"{prefix}_DEV_ACCOUNT"] = self.accounts[0]
        if self.private_keys:
            out[f"{prefix}_DEV_PRIVATE_KEY"] = self.private_keys[0]
        return out


# --------------------------------------------------------------------- CLI --
NODE_KINDS = {
    "litecoin": (LitecoinNode, "LITECOIN"),
    "bitcoin": (BitcoinNode, "BITCOIN"),
    "anvil": (AnvilNode, "ETHEREUM"),
}


def _write_env(path: Path, values: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    tmp.chmod(0o600)
    tmp.replace(path)


def up(
    only: list[str] | None = None,
    run_dir: Path = RUN_DIR,
    block_time: float | None = None,
    keep: bool = False,
    wait: bool = True,
) -> int:
    """Start the installed nodes, write nodes.env, wait for Ctrl-C/SIGTERM, stop them."""
    kinds = only or list(NODE_KINDS)
    started: list[_Process] = []
    env: dict[str, str] = {}
    env_path = run_dir / "nodes.env"

    stop_now = False

    def _on_signal(signum, _frame):
        nonlocal stop_now
        stop_now = True

    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for kind in kinds:
            cls, prefix = NODE_KINDS[kind]
            if not cls.installed():
                print(f"{kind}: not installed (run {cls.install_hint}); skipped", flush=True)
                continue
            if cls is AnvilNode:
                node = AnvilNode(run_dir / kind, block_time=block_time)
            else:
                node = cls(run_dir / kind, fresh=not keep)
            node.start()
            started.append(node)
            env.update(node.env(prefix))
            print(f"{kind}: {node.rpc_url} (ready in {node.started_in:.1f}s)", flush=True)
            if stop_now:
                break
        _write_env(env_path, env)
        print(f"wrote {env_path}", flush=True)
        if wait and not stop_now:
            print("nodes running; Ctrl-C to stop", flush=True)
            while not stop_now:
                for node in started:
                    if not node.running:
                        print(f"{node.name} exited unexpectedly:\n{node.log_tail()}", file=sys.stderr)
                        return 1
                time.sleep(0.5)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        for node in reversed(started):
            node.stop()
            print(f"{node.name}: stopped", flush=True)
        if wait:
            env_path.unlink(missing_ok=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m infra.devnet.nodes", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("up", help="start all installed nodes until Ctrl-C; writes .run/nodes.env")
    u.add_argument("--only", help="comma-separated subset of: " + ",".join(NODE_KINDS))
    u.add_argument("--run-dir", type=Path, default=RUN_DIR, help="datadirs and nodes.env (default: %(default)s)")
    u.add_argument("--block-time", type=float, default=None, help="anvil interval mining (default: automine)")
    u.add_argument("--keep", action="store_true", help="reuse existing chain data instead of starting fresh")
    sub.add_parser("status", help="which node binaries are installed")
    args = p.parse_args(argv)
    if args.cmd == "status":
        for kind, (cls, _prefix) in NODE_KINDS.items():
            print(f"{kind}: {cls.find() or 'not installed'}")
        return 0
    only = [k.strip() for k in args.only.split(",")] if args.only else None
    for k in only or []:
        if k not in NODE_KINDS:
            p.error(f"unknown node {k!r}")
    return up(only, args.run_dir, args.block_time, args.keep)


if __name__ == "__main__":
    sys.exit(main())
