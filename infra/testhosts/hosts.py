"""Local GPU test hosts: Debian's sshd in namespaces of their own, with the GPU double as their node image.

Each host runs `/usr/sbin/sshd` inside a private mount and PID namespace
(its own /etc, /home, /opt, /tmp, /var/tmp and /run, so the users a delivery
creates and the processes it starts never touch this machine's), and, where
`ip netns` is allowed, inside a network namespace joined to this one by a
veth pair on SUBNET; elsewhere it listens on a loopback port. Needs root
(the tests and `make run` run as root on the project's machines).

Each host is a node that can keep rentals apart, as the provisioning README
asks of one: its own /proc mounted `hidepid=invisible`, its own /dev (a
tmpfs) where every GPU of the double is a device node (NVIDIA:
`/dev/nvidiaN` major 195, `/dev/nvidiactl`, `/dev/nvidia-uvm`; AMD:
`/dev/dri/renderD128+N`, `/dev/kfd`), each GPU's root-owned and mode 0600,
and `/proc/driver/nvidia/params` saying `ModifyDeviceFiles: 0`. No driver is
behind those nodes: an open that the kernel permits reaches the missing
driver and fails with ENXIO, one it refuses fails with EACCES or EPERM; the
double treats the first as opened (see gpu_double/README.md). A host made
with `modify_device_files` models a driver loaded with
`NVreg_ModifyDeviceFiles=1`: it sets every GPU's file back to 0666.
"""

import fcntl
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SLOTS_LOCK = Path(tempfile.gettempdir()) / "kernodeck-testhost-slots.lock"
SUBNET = "10.213"  # 10.213.<slot>.1 on this side, .2 in the host's namespace; nothing else here uses it
SSHD = "/usr/sbin/sshd"
DOUBLE = Path(__file__).resolve().parent / "gpu_double"
# The node's sshd: keys in a root-owned directory first (provisioning installs rentals' keys there).
SSHD_CONFIG = """\
Port {port}
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
export KD_DOUBLE_BACKEND KD_DOUBLE_MODE
PYTHONPATH=/opt/kernodeck/double exec /usr/bin/python3 "$@"
"""
RENTAL_UID_FIRST = 2_000_000_000  # provisioning's first rental UID (scripts/lib.sh)
# Standard device nodes of the host's /dev: name, major, minor.
STANDARD_DEVICES = (("null", 1, 3), ("zero", 1, 5), ("full", 1, 7), ("random", 1, 8), ("urandom", 1, 9), ("tty", 5, 0))
NVIDIA_MAJOR, DRM_MAJOR = 195, 226  # as the real drivers register them; other majors are picked free here
# The driver of a node loaded with NVreg_ModifyDeviceFiles=1: every GPU's device file set back to 0666.
REOPENING_DRIVER = (
    "import glob, os, time\n"
    "while True:\n"
    "    for path in glob.glob('/dev/nvidia[0-9]*') + glob.glob('/dev/dri/renderD*'):\n"
    "        os.chmod(path, 0o666)\n"
    "    time.sleep(0.01)\n"
)


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
    modify_device_files: bool = False  # the double's driver reopens GPU device files (a node that cannot isolate)

    @property
    def host_key(self) -> str:
        return " ".join((self.root / "etc/ssh/kd_host_ed25519_key.pub").read_text().split()[:2])

    @property
    def netns(self) -> str:
        return f"kdth{self.slot}"  # the slot is this machine's only user of its addresses

    def prepare(self, admin_public_key: str) -> None:
        """The host's private filesystem: a copy of /etc, empty /home, /root, /tmp, /var/tmp, /run, the double in
        /opt. Its own /root keeps this machine's root dotfiles out: bash reads ~/.bashrc for every SSH command,
        and a developer's (pyenv's rehash under one lock file) made each root step on every host wait on it."""
        if not (self.root / "etc").exists():
            self.root.mkdir(parents=True, exist_ok=True)
            shutil.copytree("/etc", self.root / "etc", symlinks=True)
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.root / "etc/ssh/kd_host_ed25519_key")],
                check=True,
            )
        for folder in ("home", "tmp", "var/tmp", "run/sshd", "opt/kernodeck/env/bin"):
            (self.root / folder).mkdir(parents=True, exist_ok=True)
        (self.root / "root").mkdir(mode=0o700, exist_ok=True)
        (self.root / "tmp").chmod(0o1777)
        (self.root / "var/tmp").chmod(0o1777)
        last_uid = self.root / "etc/kernodeck/last-uid"
        if not last_uid.exists():  # hosts share this machine's kernel: each gives its rentals UIDs of its own
            last_uid.parent.mkdir(mode=0o755, exist_ok=True)
            last_uid.write_text(f"{RENTAL_UID_FIRST + secrets.randbelow(1000) * 100_000}\n")
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
        (opt / "double.env").write_text(f"KD_DOUBLE_BACKEND={self.backend}\nKD_DOUBLE_MODE={self.mode}\n")

    def start(self) -> None:
        if self.use_netns:
            with _slots_held():
                self.slot = self.slot or _free_slot()
                _network(self.netns, self.slot)
            self.host, self.port = f"{SUBNET}.{self.slot}.2", 22
        else:
            self.host, self.port = "127.0.0.1", _free_port()
        config = self.root / "etc/ssh/sshd_config"  # the default path: `sshd -T` on the host reads it
        config.write_text(SSHD_CONFIG.format(port=self.port, address=self.host))
        folders = ("etc", "home", "root", "opt", "run", "var/tmp", "tmp")  # /tmp last: the host folder may be under it
        mounts = [f"mount --bind {self.root / folder} /{folder}" for folder in folders]
        boot = " && ".join([*mounts, *self._proc(), *self._dev()])
        driver = f"(exec /usr/bin/python3 -c {shlex.quote(REOPENING_DRIVER)} &) && " if self.modify_device_files else ""
        inner = [
            "unshare", "--mount", "--pid", "--fork", "--kill-child", "--propagation", "private",
            "sh", "-c", f"{boot} && {driver}exec {SSHD} -D -e",
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

    def _proc(self) -> list[str]:
        """The host's /proc: processes of other users invisible; the NVIDIA driver's parameters (CUDA)."""
        commands = ["mount -t proc -o nosuid,nodev,noexec,hidepid=invisible proc /proc"]
        if self.backend == "cuda":
            modify = int(self.modify_device_files)
            commands += [
                "mount -t tmpfs -o mode=755,size=64k kd-driver /proc/driver",
                "mkdir /proc/driver/nvidia",
                f"printf 'ModifyDeviceFiles: {modify}\\n' > /proc/driver/nvidia/params",
            ]
        return commands

    def _dev(self) -> list[str]:
        """The host's own /dev: the standard nodes, ptys, /dev/shm, and one device node per GPU of the double."""
        spare = _free_char_majors(2)
        nodes = [(f"/dev/{name}", major, minor, "666") for name, major, minor in STANDARD_DEVICES]
        if self.backend == "rocm":
            nodes += [(f"/dev/dri/renderD{128 + i}", DRM_MAJOR, 128 + i, "600") for i in range(self.gpus)]
            nodes.append(("/dev/kfd", spare[0], 0, "666"))
        else:
            nodes += [(f"/dev/nvidia{i}", NVIDIA_MAJOR, i, "600") for i in range(self.gpus)]
            nodes += [("/dev/nvidiactl", NVIDIA_MAJOR, 255, "666"), ("/dev/nvidia-uvm", spare[1], 0, "666")]
        return [
            "mount -t tmpfs -o mode=755,nosuid,size=1m kd-dev /dev",
            "mkdir /dev/pts /dev/shm /dev/dri",
            "mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts",
            "mount -t tmpfs -o mode=1777,nosuid,nodev kd-shm /dev/shm",
            "ln -s pts/ptmx /dev/ptmx",
            "ln -s /proc/self/fd /dev/fd",
            *(f"ln -s /proc/self/fd/{n} /dev/{name}" for n, name in enumerate(("stdin", "stdout", "stderr"))),
            *(f"mknod -m {mode} {path} c {major} {minor}" for path, major, minor, mode in nodes),
        ]

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

    def uid_of(self, user: str) -> int | None:
        """The user's UID in the host's own /etc/passwd (None when it has no such user)."""
        for line in (self.root / "etc/passwd").read_text().splitlines():
            name, _, uid, *_ = line.split(":")
            if name == user:
                return int(uid)
        return None

    def run_inside(self, command: str, check: bool = True) -> subprocess.CompletedProcess:
        """`command` (sh) as root inside the host's namespaces, as an operator on the node would run it."""
        inner = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()[0]
        argv = ["nsenter", "-t", inner, "-m", "-p", "-n", "--", "sh", "-c", command]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=check)

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


def _free_char_majors(count: int) -> list[int]:
    """Character majors no driver of this machine registered (the double's dynamic ones: nvidia-uvm, kfd)."""
    text = Path("/proc/devices").read_text().split("Block devices:")[0]
    used = {int(line.split()[0]) for line in text.splitlines()[1:] if line.strip()}
    return [major for major in range(511, 0, -1) if major not in used][:count]


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
