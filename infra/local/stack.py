"""Start Kernodeck's processes on one machine and stop them together.

Used by `make run` (infra/local/run.py), the end-to-end tests and the
benchmarks, so that all three run the system the same way.
"""

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

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
            sys.stdout.write(f"{self.name:>10} | {line.decode(errors='replace')}")
            sys.stdout.flush()

    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self, sig: int = signal.SIGTERM, wait: float = 10.0) -> None:
        if not self.running():
            return
        self.popen.send_signal(sig)
        try:
            self.popen.wait(wait)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()


@dataclass
class Stack:
    """The services and the gateway, configured by one environment."""

    env: dict[str, str]
    services: tuple[str, ...] = ("catalog", "accounts", "orders", "payments")
    log_dir: Path | None = None
    gateway_port: int = field(default_factory=free_port)
    processes: dict[str, Process] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    def process(self, name: str) -> Process:
        if name not in self.processes:
            env = {**os.environ, **self.env, "GATEWAY_PORT": str(self.gateway_port)}
            if name != "gateway":
                env.setdefault(f"{name.upper()}_METRICS_PORT", str(free_port()))
            log_path = self.log_dir / f"{name}.log" if self.log_dir else None
            self.processes[name] = Process(name, [str(BIN / f"kernodeck-{name}")], env, log_path)
        return self.processes[name]

    def start(self, timeout: float = 60.0) -> None:
        for name in (*self.services, "gateway"):
            self.process(name).start()
        self.wait_ready(timeout)

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [p.name for p in self.processes.values() if not p.running()]
            if dead:
                raise RuntimeError(f"stopped during start: {', '.join(dead)}")
            try:
                with urllib.request.urlopen(f"{self.url}/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"the stack was not ready within {timeout} s")

    def stop(self) -> None:
        for process in reversed(list(self.processes.values())):
            process.stop()
