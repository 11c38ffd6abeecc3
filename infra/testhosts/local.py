"""The local GPU test hosts of `make run`, the end-to-end tests and the benchmarks: one per catalog model,
registered with provisioning like real nodes (their readiness check meets the labelled GPU double)."""

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from infra.testhosts.hosts import TestHost, admin_key, can_run_hosts, netns_allowed

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"
# GPUs per local host: the catalog's seeded availability, so a newcomer sees the same numbers.
LOCAL_GPUS = {"h100": 16, "h200": 8, "b200": 8, "a100": 16, "l40s": 12, "rtx4090": 20, "mi300x": 8}
ROCM_MODELS = {"mi300x"}
FIXED_SLOTS = 200  # make run's hosts: 10.213.200.2 and on
# A well-formed ed25519 public key nobody holds the private half of: the account key of the tests' and the
# benchmarks' customers, so that the orders they pay are delivered (a test that logs in makes its own key).
TEST_ACCOUNT_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFyn0c0m5jKQ1mDgM0k2bJw8Q0ChbqkQJzR0j2bKc3lx"


def provisioning_env(folder: Path) -> dict[str, str]:
    """Development settings: the test hosts' login key, a sealing key kept in `folder`, the double accepted."""
    private, _public = admin_key(folder)
    secret = folder / "provisioning-secret.key"
    if not secret.exists():
        from cryptography.fernet import Fernet

        secret.write_text(Fernet.generate_key().decode())
        secret.chmod(0o600)
    return {
        "PROVISIONING_ENVIRONMENT": "development",
        "PROVISIONING_ACCEPT_GPU_DOUBLE": "true",
        "PROVISIONING_SSH_KEY_PATH": str(private),
        "PROVISIONING_SECRET_KEY": secret.read_text().strip(),
        "PROVISIONING_SSH_CONNECT_TIMEOUT_S": "5",
    }


@contextmanager
def local_hosts(
    folder: Path,
    gpus: dict[str, int] | None = None,
    log=print,
    fixed_addresses: bool = False,
    extra_nodes: dict[str, int] | None = None,
):
    """Start one test host per model (none, with a message, where this machine cannot run them), and for a
    model of `extra_nodes` that many more, each a node of its own (its own GPUs' device files), named
    `<model>+<n>`.

    `fixed_addresses` (make run) puts each model's host at the same address every run, so that the nodes
    registered by an earlier run (their host keys are kept in `folder`) are the same nodes again."""
    if reason := can_run_hosts():
        log(f"GPU test hosts: not started ({reason}); orders will stay paid, undelivered")
        yield {}
        return
    use_netns = netns_allowed()
    _private, public = admin_key(folder)
    planned = {}
    for index, (model, count) in enumerate((gpus or LOCAL_GPUS).items()):
        backend = "rocm" if model in ROCM_MODELS else "cuda"
        for copy in range(1 + (extra_nodes or {}).get(model, 0)):
            name = f"{model}+{copy}" if copy else model
            host = TestHost(name, folder / "hosts" / name, count, backend, "ok", use_netns)
            host.slot = FIXED_SLOTS + index if fixed_addresses else None
            planned[name] = host
    hosts = {}

    def start(item) -> None:
        name, host = item
        host.prepare(public)
        host.start()
        hosts[name] = host

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(start, planned.items()))
        hosts = {name: hosts[name] for name in planned}  # in the models' order
        where = "network namespaces on 10.213.0.0/16" if use_netns else "sshd on loopback ports"
        log(f"GPU test hosts: {len(hosts)} ({where}), each with the labelled GPU double, not a GPU")
        yield hosts
    finally:
        for host in hosts.values():
            host.stop()


def register(hosts: dict[str, TestHost], env: dict[str, str]) -> list[str]:
    """Add each host as a node and check it, as `kernodeck-admin nodes add-node` does (a host known already is
    left as it is); a new one that could not keep rentals apart is an error here: every test host can. The first
    goes through that command itself, so every stack proves it; the others through one process
    (infra.testhosts.register_nodes): a process each cost a second of CPU, mostly imports. The hosts' models."""
    if not hosts:
        return []
    (first, host), others = next(iter(hosts.items())), dict(list(hosts.items())[1:])
    with ThreadPoolExecutor(max_workers=2) as pool:
        by_command = pool.submit(_add_by_command, first, host, env)
        together = pool.submit(_add_together, others, env)
        nodes = {first: by_command.result(), **together.result()}
    for name, node in nodes.items():
        if node is not None and node["isolation"] != "kernel":
            raise RuntimeError(f"the {name} test host cannot keep rentals apart: {node['isolation_note']}")
    return [name.partition("+")[0] for name in hosts]


def _node(name: str, host: TestHost) -> dict:
    return {"host": host.host, "port": host.port, "host_key": host.host_key, "model": name.partition("+")[0],
            "gpu_count": host.gpus}  # fmt: skip


def _add_by_command(name: str, host: TestHost, env: dict[str, str]) -> dict | None:
    """The node as `kernodeck-admin nodes add-node` printed it; None when it was known already."""
    node = _node(name, host)
    done = subprocess.run(
        [
            str(BIN / "kernodeck-admin"), "nodes", "add-node", "--host", node["host"], "--port", str(node["port"]),
            "--host-key", node["host_key"], "--model", node["model"], "--gpus", str(node["gpu_count"]),
            "--note", "local test host",
        ],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if done.returncode != 0 and "already_exists" not in done.stderr:
        raise RuntimeError(f"registering the {name} test host failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout) if done.returncode == 0 else None


def _add_together(hosts: dict[str, TestHost], env: dict[str, str]) -> dict[str, dict | None]:
    if not hosts:
        return {}
    done = subprocess.run(
        [str(BIN / "python"), "-m", "infra.testhosts.register_nodes"],
        input=json.dumps({name: _node(name, host) for name, host in hosts.items()}),
        cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"registering the test hosts failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)
