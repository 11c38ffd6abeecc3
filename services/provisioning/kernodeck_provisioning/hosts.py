"""GPU nodes over SSH (paramiko): deliver a rental, reclaim it.

paramiko is blocking socket code, which eventlet's monkey patching turns
cooperative, so a delivery runs in a nameko worker like any other I/O;
asyncssh would need an asyncio loop beside eventlet's hub. Host keys are
pinned: the node's key registered by the operator is the only one accepted
(RejectPolicy), never trust-on-first-use.
"""

import base64
import json
import logging
import secrets
import shlex
import time
from dataclasses import dataclass
from importlib import resources

import paramiko

from kernodeck_provisioning.domain import Access, Node
from kernodeck_provisioning.usecases import DeliveryJob

log = logging.getLogger(__name__)

NODE_ENV = "/opt/kernodeck/env"  # the node image's interpreter and tools (see the service README)
JUPYTER_BASE_PORT = 18800
DIAGNOSTIC = resources.files("kernodeck_resources") / "diagnostic.py"  # the script customers download too
GPU_DOUBLE_MARK = "gpu-double"
PREPARATION_SCRIPT = {
    "ubuntu": "prepare-base.sh",
    "custom": "prepare-base.sh",
    "python": "prepare-python.sh",
    "pytorch": "prepare-pytorch.sh",
    "notebook": "prepare-notebook.sh",
    "inference": "prepare-inference.sh",
    "blender": "prepare-blender.sh",
}


class NodeRefused(Exception):
    """The node cannot be delivered (unreachable, wrong host key, a failing step or readiness check)."""

    def __init__(self, step: str, reason: str):
        super().__init__(f"{step}: {reason}")
        self.step, self.reason = step, reason


@dataclass(frozen=True)
class StepTimes:
    """Seconds each step of a delivery took, for the benchmark and the metrics."""

    connect: float
    user: float
    preparation: float
    readiness: float


@dataclass(frozen=True)
class Delivered:
    access: Access
    times: StepTimes


def script(name: str) -> str:
    return resources.files("kernodeck_provisioning").joinpath("scripts", name).read_text()


class SshHosts:
    def __init__(
        self,
        private_key_path: str,
        login_user: str = "root",
        connect_timeout_s: float = 10.0,
        command_timeout_s: float = 900.0,
        accept_gpu_double: bool = False,
    ):
        self.key = paramiko.PKey.from_path(private_key_path)
        self.login_user = login_user
        self.connect_timeout_s = connect_timeout_s
        self.command_timeout_s = command_timeout_s
        self.accept_gpu_double = accept_gpu_double

    def deliver(self, job: DeliveryJob) -> Delivered:
        """Create the user, prepare the environment, run the readiness check; the access, or NodeRefused."""
        node = job.node
        started = time.perf_counter()
        with self._connect(node) as client:
            connected = time.perf_counter()
            env = self._env(job)
            self._run(client, "create-user.sh", env, "user")
            user_done = time.perf_counter()
            self._run(client, PREPARATION_SCRIPT[job.preparation], env, "preparation")
            prepared = time.perf_counter()
            report = self._readiness(client, env)
            checked = time.perf_counter()
        times = StepTimes(connected - started, user_done - connected, prepared - user_done, checked - prepared)
        log.info(
            "node delivered",
            extra={
                "order_id": job.order_id,
                "node_id": node.id,
                "framework": report.get("framework", {}).get("version"),
            },
        )
        if job.preparation == "notebook":
            access = Access(
                node.host,
                node.port,
                job.unix_user,
                f"http://{node.host}:{env['KD_JUPYTER_PORT']}/lab",
                env["KD_JUPYTER_TOKEN"],
            )
        else:
            access = Access(node.host, node.port, job.unix_user)
        return Delivered(access, times)

    def reclaim(self, node: Node, unix_user: str) -> None:
        with self._connect(node) as client:
            self._run(client, "reclaim.sh", {"KD_USER": unix_user}, "reclaim")

    def _env(self, job: DeliveryJob) -> dict[str, str]:
        gpus = ",".join(str(i) for i in job.gpu_indices)
        gpu_env = (
            f"ROCR_VISIBLE_DEVICES={gpus} HIP_VISIBLE_DEVICES={gpus}"
            if job.node.backend == "rocm"
            else f"CUDA_VISIBLE_DEVICES={gpus}"
        )
        env = {
            "KD_USER": job.unix_user,
            "KD_SSH_KEY": job.ssh_public_key,
            "KD_BACKEND": job.node.backend,
            "KD_GPUS": gpus,
            "KD_GPU_ENV": gpu_env,
            "KD_GPU_COUNT": str(len(job.gpu_indices)),
            "KD_ENV": NODE_ENV,
            "KD_DIAGNOSTIC_B64": base64.b64encode(DIAGNOSTIC.read_bytes()).decode(),
        }
        if job.preparation == "notebook":
            env["KD_JUPYTER_PORT"] = str(JUPYTER_BASE_PORT + min(job.gpu_indices))
            env["KD_JUPYTER_TOKEN"] = secrets.token_urlsafe(32)
        return env

    def _readiness(self, client: paramiko.SSHClient, env: dict[str, str]) -> dict:
        status, out, err = self._exec(client, "readiness.sh", env)
        try:
            report = json.loads(out)
        except ValueError:
            raise NodeRefused("readiness", f"the check printed no report (exit {status}): {err[-300:]}") from None
        if status != 0:
            raise NodeRefused("readiness", "; ".join(report.get("reasons", [])) or f"exit {status}")
        version = str(report.get("framework", {}).get("version", ""))
        if GPU_DOUBLE_MARK in version and not self.accept_gpu_double:
            raise NodeRefused("readiness", f"the node runs the test GPU double ({version}), refused in production")
        return report

    def _run(self, client: paramiko.SSHClient, name: str, env: dict[str, str], step: str) -> None:
        status, _out, err = self._exec(client, name, env)
        if status != 0:
            raise NodeRefused(step, f"{name} exited {status}: {err.strip()[-300:]}")

    def _exec(self, client: paramiko.SSHClient, name: str, env: dict[str, str]) -> tuple[int, str, str]:
        # The values travel in the script on stdin, never on a command line a process listing would show.
        exports = "".join(f"export {key}={shlex.quote(value)}\n" for key, value in env.items())
        try:
            stdin, stdout, stderr = client.exec_command("bash -s", timeout=self.command_timeout_s)
            stdin.write(exports + script(name))
            stdin.channel.shutdown_write()
            out, err = stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace")
            return stdout.channel.recv_exit_status(), out, err
        except (OSError, paramiko.SSHException) as error:
            raise NodeRefused(name, f"the connection failed: {type(error).__name__}") from None

    def _connect(self, node: Node) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        key_type, key_data = node.host_key.split()[:2]
        pinned = paramiko.PKey.from_type_string(key_type, base64.b64decode(key_data))
        client.get_host_keys().add(node.host if node.port == 22 else f"[{node.host}]:{node.port}", key_type, pinned)
        try:
            client.connect(
                node.host,
                port=node.port,
                username=self.login_user,
                pkey=self.key,
                timeout=self.connect_timeout_s,
                banner_timeout=self.connect_timeout_s,
                auth_timeout=self.connect_timeout_s,
                allow_agent=False,
                look_for_keys=False,
            )
        except paramiko.BadHostKeyException:
            client.close()
            raise NodeRefused("connect", "the host presented another SSH host key than the pinned one") from None
        except (TimeoutError, OSError, paramiko.SSHException) as error:
            client.close()
            raise NodeRefused("connect", f"{type(error).__name__}: {error}"[:300]) from None
        return client
