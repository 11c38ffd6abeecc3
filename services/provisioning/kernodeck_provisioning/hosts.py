"""GPU nodes over SSH (paramiko): check what a node provides to keep rentals apart, deliver a rental, reclaim it.

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
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from importlib import resources
from itertools import pairwise

import paramiko

from kernodeck_provisioning.domain import (
    Access,
    Delivered,
    DeliveryJob,
    Node,
    NodeCheck,
    NodeRefused,
    ProcessesSurvive,
    StepTimes,
)

log = logging.getLogger(__name__)

NODE_ENV = "/opt/kernodeck/env"  # the node image's interpreter and tools (see the service README)
JUPYTER_LOCAL_PORT = 8888  # the customer's end of the `ssh -L` tunnel to the rental's JupyterLab socket
READER_STOP_S = 2.0  # how long a closing connection waits for paramiko's reader to stop
PROCESSES_SURVIVE = 3  # reclaim.sh's (and create-user.sh's) exit status when a process of the rental lives on
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

    def check(self, node: Node) -> NodeCheck:
        """What the node provides to keep rentals apart (probe.sh, which only reads); NodeRefused when unreachable."""
        with self._session(node) as client:
            env = {"KD_BACKEND": node.backend, "KD_GPU_COUNT": str(node.gpu_count)}
            status, out, err = self._exec(client, "probe.sh", env)
        if status != 0:
            raise NodeRefused("check", f"probe.sh exited {status}: {err.strip()[-300:]}")
        findings = [line.removeprefix("finding: ") for line in out.splitlines() if line.startswith("finding: ")]
        facts = [line.removeprefix("info: ") for line in out.splitlines() if line.startswith("info: ")]
        return NodeCheck("none" if findings else "kernel", "; ".join(findings or facts)[:500])

    def deliver(self, job: DeliveryJob) -> Delivered:
        """Create the user, prepare the environment, run the readiness check, and only then install the customer's
        key; the access, or NodeRefused once what the delivery made on the node is undone (or `leftover`)."""
        node = job.node
        started = time.perf_counter()
        with self._session(node) as client:
            marks = [started, time.perf_counter()]
            env = self._env(job)
            try:
                self._run(client, "create-user.sh", env, "user")
                marks.append(time.perf_counter())
                prepared = self._run(client, PREPARATION_SCRIPT[job.preparation], env, "preparation")
                marks.append(time.perf_counter())
                report = self._readiness(client, env)
                marks.append(time.perf_counter())
                self._run(client, "install-key.sh", env, "access")
                marks.append(time.perf_counter())
            except NodeRefused as refused:
                raise self._undone(client, job, refused) from None
        times = StepTimes(*(later - earlier for earlier, later in pairwise(marks)))
        log.info(
            "node delivered",
            extra={
                "order_id": job.order_id,
                "node_id": node.id,
                "framework": report.get("framework", {}).get("version"),
            },
        )
        return Delivered(self._access(job, env, prepared), times)

    def reclaim(self, node: Node, unix_user: str) -> None:
        """Key, processes, files, GPUs and user gone; ProcessesSurvive when a process of the rental lives on."""
        with self._session(node) as client:
            self._reclaim(client, unix_user)

    def _reclaim(self, client: paramiko.SSHClient, unix_user: str) -> None:
        status, _out, err = self._exec(client, "reclaim.sh", {"KD_USER": unix_user})
        if status == PROCESSES_SURVIVE:
            raise ProcessesSurvive("reclaim", err.strip()[-300:], leftover=True)
        if status != 0:
            raise NodeRefused("reclaim", f"reclaim.sh exited {status}: {err.strip()[-300:]}", leftover=True)

    def _undone(self, client: paramiko.SSHClient, job: DeliveryJob, refused: NodeRefused) -> NodeRefused:
        """A delivery that failed after it began on the node: what it made there is reclaimed before the order
        moves on; the refusal says whether that failed too."""
        try:
            self._reclaim(client, job.unix_user)
        except NodeRefused as undoing:
            kind = type(undoing) if isinstance(undoing, ProcessesSurvive) else NodeRefused
            return kind(refused.step, f"{refused.reason}; not undone: {undoing}", leftover=True)
        return refused

    def _access(self, job: DeliveryJob, env: dict[str, str], prepared: str) -> Access:
        node = job.node
        if job.preparation != "notebook":
            return Access(node.host, node.port, job.unix_user)
        listener = next(line.split("=", 1)[1] for line in prepared.splitlines() if line.startswith("jupyter_socket="))
        tunnel = f"ssh -N -L {JUPYTER_LOCAL_PORT}:{listener} -p {node.port} {job.unix_user}@{node.host}"
        url = f"http://127.0.0.1:{JUPYTER_LOCAL_PORT}/lab"
        return Access(node.host, node.port, job.unix_user, url, env["KD_JUPYTER_TOKEN"], tunnel)

    def _env(self, job: DeliveryJob) -> dict[str, str]:
        # The driver numbers a rental's GPUs from 0 (it enumerates only the device files the rental can open).
        visible = ",".join(str(i) for i in range(len(job.gpu_indices)))
        gpu_env = (
            f"ROCR_VISIBLE_DEVICES={visible} HIP_VISIBLE_DEVICES={visible}"
            if job.node.backend == "rocm"
            else f"CUDA_VISIBLE_DEVICES={visible}"
        )
        env = {
            "KD_USER": job.unix_user,
            "KD_SSH_KEY": job.ssh_public_key,
            "KD_BACKEND": job.node.backend,
            "KD_ISOLATION": job.node.isolation,
            "KD_GPUS": ",".join(str(i) for i in job.gpu_indices),
            "KD_GPU_ENV": gpu_env,
            "KD_GPU_COUNT": str(len(job.gpu_indices)),
            "KD_ENV": NODE_ENV,
            "KD_DIAGNOSTIC_B64": base64.b64encode(DIAGNOSTIC.read_bytes()).decode(),
        }
        if job.preparation == "notebook":
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

    def _run(self, client: paramiko.SSHClient, name: str, env: dict[str, str], step: str) -> str:
        status, out, err = self._exec(client, name, env)
        if status == PROCESSES_SURVIVE:
            raise ProcessesSurvive(step, err.strip()[-300:], leftover=True)
        if status != 0:
            raise NodeRefused(step, f"{name} exited {status}: {err.strip()[-300:]}")
        return out

    def _exec(self, client: paramiko.SSHClient, name: str, env: dict[str, str]) -> tuple[int, str, str]:
        # The values travel in the script on stdin, never on a command line a process listing would show;
        # lib.sh (what every step shares) goes first.
        exports = "".join(f"export {key}={shlex.quote(value)}\n" for key, value in env.items())
        try:
            stdin, stdout, stderr = client.exec_command("bash -s", timeout=self.command_timeout_s)
            stdin.write(exports + script("lib.sh") + script(name))
            stdin.channel.shutdown_write()
            out, err = stdout.read().decode(errors="replace"), stderr.read().decode(errors="replace")
            return stdout.channel.recv_exit_status(), out, err
        except (OSError, paramiko.SSHException) as error:
            raise NodeRefused(name, f"the connection failed: {type(error).__name__}") from None

    @contextmanager
    def _session(self, node: Node) -> Iterator[paramiko.SSHClient]:
        client = self._connect(node)
        try:
            yield client
        finally:
            _close(client)

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
            _close(client)
            raise NodeRefused("connect", "the host presented another SSH host key than the pinned one") from None
        except (TimeoutError, OSError, paramiko.SSHException) as error:
            _close(client)
            raise NodeRefused("connect", f"{type(error).__name__}: {error}"[:300]) from None
        return client


def _close(client: paramiko.SSHClient) -> None:
    """Close once paramiko's reader has stopped. Under eventlet that reader is a green thread waiting on the
    socket; closed first, the socket's descriptor is free while the reader still waits on it, and a socket opened
    meanwhile (the database's, the broker's, a pipe) may get the number: eventlet then refuses the second reader."""
    transport = client.get_transport()
    if transport is not None and transport.is_alive():
        with suppress(OSError):
            transport.sock.shutdown(socket.SHUT_RDWR)  # the reader wakes on the end of the stream and stops
        transport.join(READER_STOP_S)
    client.close()
