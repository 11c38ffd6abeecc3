"""A RabbitMQ node and a PostgreSQL cluster of the fault suite's own, so that restarting them disturbs nobody.

Both run from the machine's installed binaries on free ports with their data
in a temporary directory of their own (outside pytest's, which only root
may enter), and are stopped and their data dropped at the end. RabbitMQ runs
as the rabbitmq user and PostgreSQL as postgres, as their packages do.
"""

import shlex
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, text

from infra.local.stack import free_port

POSTGRES_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)), None)


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not within {timeout:.0f} s")
        time.sleep(0.2)


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Broker:
    node: str
    port: int
    directory: Path
    process: subprocess.Popen | None = None
    tls_port: int | None = None  # AMQPS, when started with a certificate

    @property
    def amqp_uri(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}/"

    def ctl(self, *args: str) -> None:
        subprocess.run(["rabbitmqctl", "-n", self.node, *args], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        env = {
            "PATH": "/usr/sbin:/usr/bin:/bin",
            "HOME": str(self.directory),
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(free_port()),
            "RABBITMQ_MNESIA_BASE": str(self.directory / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.directory / "log"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.directory / "plugins"),  # none: the machine's API keeps its port
            "RABBITMQ_CONFIG_FILE": str(self.directory / "rabbitmq.conf"),
        }
        log = (self.directory / "server.out").open("ab")
        self.process = subprocess.Popen(["rabbitmq-server"], env=env, stdout=log, stderr=subprocess.STDOUT)
        _wait(lambda: _listening(self.port) or self._exited(), 120, "RabbitMQ")

    def _exited(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"RabbitMQ stopped: {(self.directory / 'server.out').read_text()[-2000:]}")
        return False

    def restart(self) -> None:
        """Stop the broker (every connection dropped) and start it again with its durable queues."""
        self.ctl("stop_app")
        self.ctl("start_app")
        _wait(lambda: _listening(self.port), 60, "RabbitMQ")

    def block_publishers(self) -> None:
        """A memory alarm (a limit far below what the node uses): every connection that publishes is blocked."""
        self.ctl("set_vm_memory_high_watermark", "absolute", "10MB")

    def unblock_publishers(self) -> None:
        self.ctl("set_vm_memory_high_watermark", "0.4")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            subprocess.run(["rabbitmqctl", "-n", self.node, "stop"], capture_output=True, timeout=60)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()


@contextmanager
def _directory(owner: str) -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix=f"kd-faults-{owner}-"))
    try:
        directory.chmod(0o755)
        shutil.chown(directory, owner)
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def own_broker(tls: dict[str, Path] | None = None) -> Iterator[Broker]:
    """A node of the suite's own; `tls` (cacertfile, certfile, keyfile) adds an AMQPS listener."""
    with _directory("rabbitmq") as directory:
        broker = _configured_broker(directory, tls)
        try:
            broker.start()
            yield broker
        finally:
            broker.stop()


def _configured_broker(directory: Path, tls: dict[str, Path] | None = None) -> Broker:
    (directory / "plugins").write_text("[].\n")
    port, tls_port = free_port(), free_port() if tls else None
    config = f"listeners.tcp.default = {port}\nloopback_users = none\n"
    if tls:
        config += f"listeners.ssl.default = {tls_port}\n"
        config += "".join(f"ssl_options.{key} = {path}\n" for key, path in tls.items())
        config += "ssl_options.verify = verify_none\nssl_options.fail_if_no_peer_cert = false\n"
    (directory / "rabbitmq.conf").write_text(config)
    for sub in ("mnesia", "log"):
        (directory / sub).mkdir()
    subprocess.run(["chown", "-R", "rabbitmq:", str(directory)], check=True)
    return Broker(f"kdfaults{uuid.uuid4().hex[:6]}@localhost", port, directory, tls_port=tls_port)


@dataclass
class Postgres:
    data: Path
    port: int

    @property
    def admin_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def pg_ctl(self, *args: str) -> None:
        options = (
            f"-p {self.port} -k {self.data.parent} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300"
        )
        argv = [str(POSTGRES_BIN / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.data.parent / "log")]
        subprocess.run(["su", "postgres", "-c", shlex.join([*argv, "-w", *args])], check=True, timeout=120)

    def restart(self) -> None:
        """A fast restart: every connection is cut, the data stays."""
        self.pg_ctl("-m", "fast", "restart")

    def terminate(self, databases: list[str]) -> int:
        """Kill every connection to `databases` (pg_terminate_backend); how many were killed."""
        engine = create_engine(self.admin_url.replace("postgresql://", "postgresql+psycopg2://"))
        try:
            with engine.connect() as conn:
                killed = conn.execute(
                    text(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        " WHERE datname = ANY(:names) AND pid <> pg_backend_pid()"
                    ),
                    {"names": databases},
                ).scalar_one()
        finally:
            engine.dispose()
        return killed


@contextmanager
def own_postgres() -> Iterator[Postgres]:
    with _directory("postgres") as directory:
        data = directory / "data"
        initdb = [str(POSTGRES_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"]
        subprocess.run(["su", "postgres", "-c", shlex.join(initdb)], check=True, capture_output=True, timeout=120)
        server = Postgres(data, free_port())
        server.pg_ctl("start")
        try:
            yield server
        finally:
            server.pg_ctl("-m", "immediate", "stop")
