"""Local GPU test hosts: Debian's sshd in namespaces of their own, with the GPU double as their node image.

Each host runs `/usr/sbin/sshd` inside a private mount and PID namespace
(its own /etc, /home, /opt, /tmp and /run, so the users a delivery creates
and the processes it starts never touch this machine's), and, where `ip
netns` is allowed, inside a network namespace joined to this one by a veth
pair on SUBNET; elsewhere it listens on a loopback port. Needs root (the
tests and `make run` run as root on the project's machines).
"""

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

SLOTS_LOCK = Path(tempfile.gettempdir()) / "kernodeck-testhost-slots.lock"
SUBNET = "10.213"  # 10.213.<slot>.1 on this side, .2 in the host's namespace; nothing else here uses it
SSHD = "/usr/sbin/sshd"
DOUBLE = Path(__file__).resolve().parent / "gpu_double"
SSHD_CONFIG = """\
{ports}
ListenAddress {address}
HostKey /etc/ssh/kd_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AuthorizedKeysFile /etc/ssh/authorized_keys/%u .ssh/authorized_keys
PidFile none
LogLevel ERROR
"""
PYTHON_WRAPPER = """\
#!/bin/sh
# GPU DOUBLE node image: the host's Python with the stand-in torch (see gpu_double/README.md).
. /opt/kernodeck/double.env
export KD_DOUBLE_GPUS KD_DOUBLE_BACKEND KD_DOUBLE_MODE
PYTHONPATH=/opt/kernodeck/double exec /usr/bin/python3 "$@"
"""


def can_run_hosts() -> str | None:
    """None when test hosts can start here, else why not."""
    if os.geteuid() != 0:
        return "test hosts need root (user namespaces and useradd)"
    if not Path(SSHD).exists():
        return f"{SSHD} is missing: run infra/test/prepare.sh (it installs openssh-server)"
    return None


def netns_allowed() -> bool:
    probe = f"kdprobe{uuid.uuid4().hex[:6]}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return False
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return True


@dataclass
class TestHost:
    name: str
    root: Path
    gpus: int
    backend: str
    mode: str
    use_netns: bool
    host: str = ""
    port: int = 22
    process: subprocess.Popen | None = None
    slot: int | None = None
    extra_ports: int = 0  # more ports of the same sshd, each registrable as a node of its own (benchmarks)
    ports: list[int] = field(default_factory=list)

    @property
    def host_key(self) -> str:
        return " ".join((self.root / "etc/ssh/kd_host_ed25519_key.pub").read_text().split()[:2])

    @property
    def netns(self) -> str:
        return f"kdth{self.slot}"  # the slot is this machine's only user of its addresses

    def prepare(self, admin_public_key: str) -> None:
        """The host's private filesystem: a copy of /etc, empty /home, /tmp, /run, the double in /opt."""
        if not (self.root / "etc").exists():
            self.root.mkdir(parents=True, exist_ok=True)
            shutil.copytree("/etc", self.root / "etc", symlinks=True)
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.root / "etc/ssh/kd_host_ed25519_key")],
                check=True,
            )
        for folder in ("home", "tmp", "run/sshd", "opt/kernodeck/env/bin"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        (self.root / "tmp").chmod(0o1777)
        keys = self.root / "etc/ssh/authorized_keys"
        keys.mkdir(mode=0o755, exist_ok=True)
        (keys / "root").write_text(admin_public_key.strip() + "\n")
        opt = self.root / "opt/kernodeck"
        shutil.rmtree(opt / "double", ignore_errors=True)
        shutil.copytree(DOUBLE, opt / "double", ignore=shutil.ignore_patterns("bin", "__pycache__", "*.md"))
        for tool in (DOUBLE / "bin").iterdir():
            shutil.copy2(tool, opt / "env/bin" / tool.name)
        (opt / "env/bin/python").write_text(PYTHON_WRAPPER)
        (opt / "env/bin/python").chmod(0o755)
        (opt / "double.env").write_text(
            f"KD_DOUBLE_GPUS={self.gpus}\nKD_DOUBLE_BACKEND={self.backend}\nKD_DOUBLE_MODE={self.mode}\n"
        )

    def start(self) -> None:
        if self.use_netns:
            with _slots_held():
                self.slot = self.slot or _free_slot()
                _network(self.netns, self.slot)
            self.host, self.ports = f"{SUBNET}.{self.slot}.2", [22, *range(2201, 2201 + self.extra_ports)]
        else:
            self.host, self.ports = "127.0.0.1", [_free_port() for _ in range(1 + self.extra_ports)]
        self.port = self.ports[0]
        config = self.root / "etc/ssh/kd_sshd_config"
        config.write_text(SSHD_CONFIG.format(ports="\n".join(f"Port {p}" for p in self.ports), address=self.host))
        mounts = " && ".join(
            f"mount --bind {self.root / folder} /{folder}"
            for folder in ("etc", "home", "opt", "run", "tmp")  # /tmp last: the host folder may be under it
        )
        inner = [
            "unshare", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--propagation", "private",
            "sh", "-c", f"{mounts} && exec {SSHD} -D -e -f /etc/ssh/kd_sshd_config",
        ]  # fmt: skip
        argv = ["ip", "netns", "exec", self.netns, *inner] if self.use_netns else inner
        log = (self.root / "sshd.log").open("ab")
        self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 15
        while not _answers(self.host, self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"test host {self.name} did not start: {(self.root / 'sshd.log').read_text()[-500:]}"
                )
            time.sleep(0.05)

    def stop_sshd(self) -> None:
        """The host goes down (its namespace and address stay): connections are refused."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def stop(self) -> None:
        self.stop_sshd()
        if self.use_netns:
            subprocess.run(["ip", "netns", "del", self.netns], capture_output=True)

    def home_of(self, user: str) -> Path:
        return self.root / "home" / user

    def registration(self, model: str, port: int | None = None) -> dict:
        return {
            "host": self.host,
            "port": port or self.port,
            "host_key": self.host_key,
            "model": model,
            "gpu_count": self.gpus,
        }


def _network(netns: str, slot: int) -> None:
    outside, inside = f"kdth{slot}a", f"kdth{slot}b"
    commands = [
        ["ip", "netns", "add", netns],
        ["ip", "link", "add", outside, "type", "veth", "peer", "name", inside],
        ["ip", "link", "set", inside, "netns", netns],
        ["ip", "addr", "add", f"{SUBNET}.{slot}.1/30", "dev", outside],
        ["ip", "link", "set", outside, "up"],
        ["ip", "-n", netns, "addr", "add", f"{SUBNET}.{slot}.2/30", "dev", inside],
        ["ip", "-n", netns, "link", "set", inside, "up"],
        ["ip", "-n", netns, "link", "set", "lo", "up"],
    ]
    subprocess.run(["ip", "netns", "del", netns], capture_output=True)  # a leftover of a killed run
    for command in commands:
        subprocess.run(command, check=True, capture_output=True)


@contextmanager
def _slots_held() -> Iterator[None]:
    """Held while a host picks a slot and takes its addresses, so that processes starting hosts at once (the test
    lanes run in parallel) never pick the same slot, nor delete the namespace of one just taken."""
    with open(SLOTS_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _free_slot() -> int:
    used = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    taken = {int(part.split(".")[2]) for part in used.split() if part.startswith(f"{SUBNET}.")}
    start = uuid.uuid4().int % 250
    return next(1 + (start + i) % 250 for i in range(250) if 1 + (start + i) % 250 not in taken)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5) as sock:
            return sock.recv(4).startswith(b"SSH")
    except OSError:
        return False


def admin_key(folder: Path) -> tuple[Path, str]:
    """The key provisioning logs into the test hosts with (private path, public line); made once per folder."""
    private = folder / "provisioning_ed25519"
    if not private.exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(private)], check=True)
    return private, (folder / "provisioning_ed25519.pub").read_text().strip()
