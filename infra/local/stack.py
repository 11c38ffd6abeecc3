"""Start Kernodeck's processes on one machine and stop them together.

Used by `make run` (infra/local/run.py), the end-to-end tests and the
benchmarks, so that all three run the system the same way. Besides the
services and the gateway, a stack may run one chain watcher per network
(`watcher-bitcoin`: `kernodeck-watcher --network bitcoin`), each with its own
metrics port and database: WATCHER_<NETWORK>_DATABASE_URL when given (tests
pass PostgreSQL databases), else WATCHER_DATABASE_URL, else its SQLite file
under DATA_DIR; WATCHER_<NETWORK>_START_HEIGHT, when given, is its WATCHER_START_HEIGHT.

With `bus_users`, each process logs into the broker as its own user (`kernodeck-<name>`, its local password:
kernodeck_kit.bus_users), whose permissions `start` writes to the vhost of AMQP_URI first, as production's
job does: a permission the code lacks fails here, not on the first day of a deployment.
"""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from infra.devnet.telegram_double import TelegramDouble
from kernodeck_kit.bus_permissions import principal
from kernodeck_kit.bus_users import apply as apply_bus_users
from kernodeck_kit.bus_users import local_password, uri_for

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Process:
    name: str
    argv: list[str]
    env: dict[str, str]
    log_path: Path | None = None
    popen: subprocess.Popen | None = None

    def start(self) -> None:
        output = self.log_path.open("ab") if self.log_path else subprocess.PIPE
        self.popen = subprocess.Popen(
            self.argv, env=self.env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        if self.log_path is None:
            threading.Thread(target=self._echo, daemon=True).start()

    def _echo(self) -> None:
        for line in self.popen.stdout:
            sys.stdout.write(f"{self.name:>16} | {line.decode(errors='replace')}")
            sys.stdout.flush()

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, wait: float = 10.0) -> None:
        if self.running():
            self.popen.send_signal(sig)
            self.wait_stopped(wait)

    def wait_stopped(self, wait: float = 10.0) -> None:
        """Wait for a process told to stop; kill it after `wait` seconds."""
        if self.popen is None:
            return
        try:
            self.popen.wait(wait)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()


WATCHER = "watcher-"
DEFAULT_AMQP_URI = "amqp://guest:guest@127.0.0.1:5672/"


@dataclass
class Stack:
    """The services, the chain watchers of `watchers` (networks) and the gateway, configured by one environment."""

    env: dict[str, str]
    services: tuple[str, ...] = ("catalog", "accounts", "orders", "payments", "provisioning", "support", "notify")
    log_dir: Path | None = None
    gateway_port: int = field(default_factory=free_port)
    processes: dict[str, Process] = field(default_factory=dict)
    watchers: tuple[str, ...] = ()
    process_env: dict[str, dict[str, str]] = field(default_factory=dict)  # a process's own settings, by name
    hosts: dict = field(default_factory=dict)  # the GPU test hosts registered as nodes, by model
    telegram: TelegramDouble | None = None  # the Bot API notify talks to, when it is the local double
    bus_users: str = ""  # the management API's URL (http://user:pass@host:15672): each process as its own user

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    def process(self, name: str) -> Process:
        if name not in self.processes:
            env = {
                "KERNODECK_PUBLIC_URL": self.url,  # the pages notify's messages link to
                **os.environ,
                **self.env,
                "GATEWAY_PORT": str(self.gateway_port),
                **self.process_env.get(name, {}),
            }
            if self.bus_users:
                env.setdefault("OPERATOR_AMQP_URI", env.get("AMQP_URI", DEFAULT_AMQP_URI))  # the command: as guest
                env["AMQP_URI"] = uri_for(
                    env.get("AMQP_URI", DEFAULT_AMQP_URI), name, local_password(principal(name).name)
                )
            if name.startswith(WATCHER):
                network = name.removeprefix(WATCHER)
                argv = [str(BIN / "kernodeck-watcher"), "--network", network]
                env.update(watcher_env(env, network))
            else:
                argv = [str(BIN / f"kernodeck-{name}")]
                if name != "gateway":
                    env.setdefault(f"{name.upper()}_METRICS_PORT", str(free_port()))
            log_path = self.log_dir / f"{name}.log" if self.log_dir else None
            self.processes[name] = Process(name, argv, env, log_path)
        return self.processes[name]

    def watcher(self, network: str) -> Process:
        return self.process(WATCHER + network)

    def start(self, timeout: float = 60.0) -> None:
        if self.bus_users:
            amqp_uri = {**os.environ, **self.env}.get("AMQP_URI", DEFAULT_AMQP_URI)
            vhost = urllib.parse.unquote(urllib.parse.urlsplit(amqp_uri).path[1:]) or "/"
            apply_bus_users(self.bus_users, vhost, local_password)
        for name in (*self.services, *(WATCHER + n for n in self.watchers), "gateway"):
            self.process(name).start()
        self.wait_ready(timeout)

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until the gateway's /readyz answers 200 and every watcher has reported its node followed."""
        deadline = time.monotonic() + timeout
        waiting = ["gateway"]
        while time.monotonic() < deadline:
            dead = [p.name for p in self.processes.values() if not p.running()]
            if dead:
                raise RuntimeError(f"stopped during start: {', '.join(dead)}")
            waiting = [] if _answers(f"{self.url}/readyz") else ["gateway"]
            waiting += [n for n in self.watchers if not self.watcher_ready(n)]
            waiting += [] if "notify" not in self.services or self.notify_ready() else ["notify"]
            if not waiting:
                return
            time.sleep(0.2)
        raise TimeoutError(f"the stack was not ready within {timeout} s (waiting for: {', '.join(waiting)})")

    def watcher_metrics_url(self, network: str) -> str:
        return f"http://127.0.0.1:{self.watcher(network).env['WATCHER_METRICS_PORT']}/metrics"

    def watcher_ready(self, network: str) -> bool:
        """The watcher has scanned its node and reported itself not lagging (its metrics say so)."""
        port = self.watcher(network).env["WATCHER_METRICS_PORT"]
        return metrics_show(port, f'kernodeck_watcher_lagging{{network="{network}"}} 0.0')

    def notify_ready(self) -> bool:
        """Notify has bound its event queue and the Bot API has answered it (its metrics say so)."""
        return metrics_show(self.process("notify").env["NOTIFY_METRICS_PORT"], "kernodeck_notify_ready 1.0")

    def stop(self) -> None:
        """SIGTERM to every process at once (the gateway first), then wait for each."""
        running = [p for p in reversed(list(self.processes.values())) if p.running()]
        for process in running:
            process.popen.send_signal(signal.SIGTERM)
        for process in running:
            process.wait_stopped()


def metrics_show(port: str, sample: str) -> bool:
    """The process whose metrics are on `port` reports `sample` (a line of its /metrics)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
            return sample in response.read().decode()
    except OSError:
        return False


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def watcher_env(env: dict[str, str], network: str) -> dict[str, str]:
    """One watcher's database and metrics port, from the stack's settings."""
    key = network.upper()
    own = {
        "WATCHER_DATABASE_URL": env.get(f"WATCHER_{key}_DATABASE_URL", env.get("WATCHER_DATABASE_URL", "")),
        "WATCHER_METRICS_PORT": env.get(f"WATCHER_{key}_METRICS_PORT") or str(free_port()),
    }
    if start := env.get(f"WATCHER_{key}_START_HEIGHT"):
        own["WATCHER_START_HEIGHT"] = start
    return own
