"""Rentals that cannot touch each other, on real SSH test hosts: two rentals placed on the same node, each
trying what a tenant could against the other and against root's steps."""

import json
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import eventlet
import pytest
from nameko.exceptions import RemoteError
from prometheus_client import REGISTRY

from infra.testhosts.hosts import RENTAL_UID_FIRST
from kernodeck_provisioning.domain import DeliveryJob, Isolation, Node, NodeState, unix_user_for
from kernodeck_provisioning.hosts import NodeRefused, SshHosts
from services.provisioning.tests.conftest import customer_key, wait_until
from services.provisioning.tests.test_delivery import (
    _try_hold,
    access_of,
    http_status,
    pinned,
    register,
    ssh,
    tunnel,
)

GPUS_EACH = 2
NAMES = (
    "import torch; print(','.join(torch.cuda.get_device_properties(i).name for i in range(torch.cuda.device_count())))"
)
OPEN_EACH = (
    "import errno, os, sys\n"
    "for path in sys.argv[1:]:\n"
    "    try:\n"
    "        os.close(os.open(path, os.O_RDWR))\n"
    "        print(path, 'opened')\n"
    "    except OSError as error:\n"
    "        print(path, errno.errorcode[error.errno])\n"
)


@dataclass
class Tenant:
    order_id: str
    private_key: Path
    access: dict
    known_hosts: Path
    host: object

    @property
    def user(self) -> str:
        return self.access["ssh_user"]

    def run(self, command: str):
        return ssh(self.host, self.private_key, self.user, command, self.known_hosts)


def two_rentals(provisioning, host, orders_events, tmp_path, days=(3, 3), preparation="notebook"):
    """Rentals A and B of two GPUs each, delivered on `host` (checked: it keeps rentals apart)."""
    assert register(provisioning, host)["isolation"] == "kernel"
    created, paid = orders_events
    tenants = []
    for name, duration in zip("AB", days, strict=True):
        private, public = customer_key(tmp_path)
        order_id = f"order{name}"
        created(order_id, gpus=GPUS_EACH, key=public, preparation=preparation, days=duration)
        wait_until(lambda order_id=order_id: _try_hold(provisioning, order_id, GPUS_EACH), "the hold")
        paid(order_id)
        tenants.append((order_id, private))
    delivered = []
    for order_id, private in tenants:
        access = wait_until(lambda order_id=order_id: access_of(provisioning, order_id), "the access", seconds=90)
        assert (access["ssh_host"], access["ssh_port"]) == (host.host, host.port)  # the same node
        delivered.append(Tenant(order_id, private, access, pinned(tmp_path, host), host))
    return delivered


def gpu_files(host, user: str) -> list[str]:
    listing = host.run_inside("stat -c '%U %n' /dev/nvidia[0-9]*").stdout.split("\n")
    return [path for owner, _, path in (line.partition(" ") for line in listing if line) if owner == user]


def out_of_reach(uid: int) -> str:
    """A process with `uid` as its effective UID only, real and saved UIDs root's: the user cannot signal it."""
    become = f"import os, time; os.setresuid(0, {uid}, 0); time.sleep(600)"
    return f"setsid -f python3 -c {shlex.quote(become)} > /dev/null 2>&1"


def processes_of(uid: int) -> list[int]:
    """PIDs on this whole machine (every test host included) with `uid` as a real, effective or saved UID."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        uids = next(line.split()[1:4] for line in status.splitlines() if line.startswith("Uid:"))
        if str(uid) in uids:
            found.append(int(entry.name))
    return found


def machine_command_lines() -> set[str]:
    lines = set()
    for entry in Path("/proc").iterdir():
        try:
            lines.add((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return lines


# A process of its own that reads every command line on the machine until SIGTERM, then writes them out.
WATCH_COMMAND_LINES = """
import json, os, signal, sys, time
seen, running = set(), True
def stop(*_):
    global running
    running = False
signal.signal(signal.SIGTERM, stop)
while running:
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as line:
                seen.add(line.read().replace(b"\\0", b" ").decode(errors="replace"))
        except OSError:
            pass
    time.sleep(0.01)
with open(sys.argv[1], "w") as out:
    json.dump(sorted(seen), out)
"""


def test_a_rental_opens_only_its_own_gpus_whatever_its_visibility_variables_say(
    provisioning, test_hosts, orders_events, tmp_path
):
    host = test_hosts(gpus=2 * GPUS_EACH)
    a, b = two_rentals(provisioning, host, orders_events, tmp_path, preparation="pytorch")
    mine, theirs = gpu_files(host, a.user), gpu_files(host, b.user)
    assert len(mine) == len(theirs) == GPUS_EACH and not set(mine) & set(theirs)

    opened = a.run(f"python3 -c {shlex.quote(OPEN_EACH)} {' '.join(mine + theirs)}")
    assert opened.returncode == 0, opened.stderr
    answers = dict(line.split() for line in opened.stdout.splitlines())
    # ENXIO: the kernel let the open through to the (absent) driver; EACCES: the kernel refused it.
    assert answers == {**{path: "ENXIO" for path in mine}, **{path: "EACCES" for path in theirs}}

    own_names = ",".join(f"Kernodeck GPU double ({Path(path).name})" for path in mine)
    for variables, expected in (
        ("", own_names),  # as the rental's environment sets them
        ("env -u CUDA_VISIBLE_DEVICES", own_names),
        ("env CUDA_VISIBLE_DEVICES=0,1,2,3", own_names),
        (f"env CUDA_VISIBLE_DEVICES={GPUS_EACH},{GPUS_EACH + 1}", ""),  # indices past its own: nothing more
    ):
        seen = a.run(f"{variables} /opt/kernodeck/env/bin/python -c {shlex.quote(NAMES)}")
        assert (seen.returncode, seen.stdout.strip()) == (0, expected), (variables, seen.stderr)
    theirs_seen = b.run(f"env -u CUDA_VISIBLE_DEVICES /opt/kernodeck/env/bin/python -c {shlex.quote(NAMES)}")
    assert theirs_seen.stdout.strip() == ",".join(f"Kernodeck GPU double ({Path(p).name})" for p in theirs)


def test_the_readiness_check_refuses_a_node_where_the_rental_can_open_a_gpu_not_its_own(test_hosts, keys, tmp_path):
    # A node checked as isolating whose NVIDIA driver was loaded since with NVreg_ModifyDeviceFiles=1: it sets
    # every GPU's device file back to 0666, so the rental's user can open its neighbours' GPUs.
    host = test_hosts(gpus=2 * GPUS_EACH, modify_device_files=True)
    node = Node("n", host.host, host.port, host.host_key, "h100", "cuda", 2 * GPUS_EACH, NodeState.AVAILABLE,
                datetime.now(UTC), isolation=Isolation.KERNEL)  # fmt: skip
    agent = SshHosts(str(keys[0]), accept_gpu_double=True)
    _, public = customer_key(tmp_path)
    job = DeliveryJob("o1", node, (0, 1), "kdleaky", public, "pytorch")
    try:
        agent.deliver(job)
        raise AssertionError("delivered on a node where the rental can open other GPUs")
    except NodeRefused as refused:
        assert refused.step == "readiness" and not refused.leftover
        assert "foreign_gpu: /dev/nvidia2 opens" in refused.reason and "more_gpus" in refused.reason
    assert host.uid_of(job.unix_user) is None  # undone
    assert not (host.root / "etc/ssh/authorized_keys" / job.unix_user).exists()


def test_a_node_whose_driver_reopens_gpu_files_is_checked_none_and_takes_one_rental_at_a_time(
    provisioning, test_hosts, orders_events, tmp_path
):
    host = test_hosts(gpus=2 * GPUS_EACH, modify_device_files=True)
    node = register(provisioning, host)
    assert node["isolation"] == "none"
    assert "NVreg_ModifyDeviceFiles=0" in node["isolation_note"] and "mode 666" in node["isolation_note"]
    created, paid = orders_events
    _, public = customer_key(tmp_path)
    created("orderA", gpus=GPUS_EACH, key=public)
    wait_until(lambda: _try_hold(provisioning, "orderA", GPUS_EACH), "the hold")
    paid("orderA")
    access = wait_until(lambda: access_of(provisioning, "orderA"), "the access", seconds=90)
    assert access["ssh_host"] == host.host  # alone on it, it is delivered (the variables narrow what it sees)
    with pytest.raises(RemoteError) as refused:
        _try_hold(provisioning, "orderB", 1)
    assert refused.value.code == "out_of_capacity"  # two GPUs idle there, given to nobody else


def test_a_rental_sees_nothing_of_its_neighbour_and_cannot_reach_its_jupyter(
    provisioning, test_hosts, orders_events, tmp_path
):
    host = test_hosts(gpus=2 * GPUS_EACH)
    watcher = subprocess.Popen(  # every process's arguments on this machine, all through the deliveries
        [sys.executable, "-c", WATCH_COMMAND_LINES, str(tmp_path / "command_lines.json")]
    )
    try:
        a, b = two_rentals(provisioning, host, orders_events, tmp_path)
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait()
    seen_lines = set(json.loads((tmp_path / "command_lines.json").read_text()))
    tokens = {t.user: t.access["jupyter_token"] for t in (a, b)}
    assert [line for line in seen_lines if "--ServerApp.sock=" in line]  # it watched while JupyterLab started
    assert not [line for line in seen_lines | machine_command_lines() if any(t in line for t in tokens.values())]

    their_home = f"/home/{b.user}"
    for command in (f"ls {their_home}", f"cat {their_home}/.kernodeck/jupyter-token", f"cat {their_home}/.profile"):
        refused = a.run(command)
        assert refused.returncode != 0 and "Permission denied" in refused.stderr, command

    jupyter = host.run_inside(f"pgrep -u {b.user} -f jupyter-lab").stdout.split()
    assert len(jupyter) == 1
    listing = a.run("ps -eo user:32,pid,args")
    assert listing.returncode == 0
    assert b.user not in listing.stdout and tokens[b.user] not in listing.stdout
    assert {line.split()[0] for line in listing.stdout.splitlines()[1:]} == {a.user}
    assert a.run(f"cat /proc/{jupyter[0]}/cmdline").returncode != 0
    assert a.run(f"cat /proc/{jupyter[0]}/environ").returncode != 0

    their_socket = f"{their_home}/.kernodeck/jupyter.sock"
    connect = f"import socket; socket.socket(socket.AF_UNIX).connect({their_socket!r})"
    assert "PermissionError" in a.run(f"python3 -c {shlex.quote(connect)}").stderr
    with tunnel(host, a.private_key, a.user, their_socket, a.known_hosts) as port:
        assert http_status(f"http://127.0.0.1:{port}/lab?token={tokens[b.user]}") != 200
    with tunnel(host, b.private_key, b.user, their_socket, b.known_hosts) as port:  # what A could not do
        assert http_status(f"http://127.0.0.1:{port}/lab?token={tokens[b.user]}") == 200
    own_socket = f"/home/{a.user}/.kernodeck/jupyter.sock"
    with tunnel(host, a.private_key, a.user, own_socket, a.known_hosts) as port:
        assert http_status(f"http://127.0.0.1:{port}/lab?token={tokens[b.user]}") == 403
        assert http_status(f"http://127.0.0.1:{port}/lab?token={tokens[a.user]}") == 200


def test_after_a_failed_delivery_the_customers_key_opens_no_session_and_nothing_of_it_is_left(
    provisioning, test_hosts, orders_events, tmp_path
):
    host = test_hosts(gpus=2, mode="cpu")  # its readiness check finds no GPU: the delivery fails there
    node = register(provisioning, host)
    private, public = customer_key(tmp_path)
    created, paid = orders_events
    created("orderF", key=public)
    wait_until(lambda: _try_hold(provisioning, "orderF", 1), "the hold")
    paid("orderF")
    out = wait_until(
        lambda: next(n for n in provisioning.list_nodes() if n["id"] == node["id"])["state"] == "maintenance",
        "the node out of service",
    )
    assert out
    user = unix_user_for("orderF")
    refused = ssh(host, private, user, "true", pinned(tmp_path, host))
    assert refused.returncode == 255 and "Permission denied" in refused.stderr
    assert host.uid_of(user) is None
    assert not host.home_of(user).exists()
    assert not (host.root / "etc/ssh/authorized_keys" / user).exists()
    assert "cpu_fallback" in next(n for n in provisioning.list_nodes() if n["id"] == node["id"])["note"]


def test_a_failed_delivery_that_cannot_be_undone_keeps_the_node_out_of_service_until_it_is(
    provisioning, test_hosts, orders_events, tmp_path
):
    host = test_hosts(gpus=2)
    node = register(provisioning, host)
    # What an earlier attempt of this rental left (it was cut off there): its user, and a process of its UID that
    # the user cannot signal (its real UID is root's). The delivery must remove that first, and cannot.
    user, uid = unix_user_for("orderL"), 2_100_000_000
    host.run_inside(f"useradd --uid {uid} --no-log-init --shell /bin/bash {user}")
    host.run_inside(out_of_reach(uid))
    _, public = customer_key(tmp_path)
    created, paid = orders_events
    created("orderL", key=public)
    wait_until(lambda: _try_hold(provisioning, "orderL", 1), "the hold")
    before = REGISTRY.get_sample_value("kernodeck_reclaim_survivors_total") or 0
    paid("orderL")

    wait_until(lambda: provisioning.list_nodes()[0]["state"] == "maintenance", "the node out of service", 60)
    assert REGISTRY.get_sample_value("kernodeck_reclaim_survivors_total") > before  # the alert's metric
    assert "survive" in provisioning.list_nodes()[0]["note"]
    assert host.uid_of(user) == uid  # its UID stays taken while its process lives
    assert not (host.root / "etc/ssh/authorized_keys" / user).exists()

    host.run_inside(f"pkill -KILL --euid {uid}")  # what the operator does, reading the alert
    wait_until(lambda: host.uid_of(user) is None, "the leftover reclaimed by the sweep", seconds=60)
    assert processes_of(uid) == []
    node_now = next(n for n in provisioning.list_nodes() if n["id"] == node["id"])
    assert node_now["state"] == "maintenance"  # back in service only by an operator


def test_a_rental_forking_in_a_loop_and_ignoring_sigterm_is_reclaimed_with_nothing_left(
    provisioning, test_hosts, orders_events, clock, tmp_path
):
    host = test_hosts(gpus=2 * GPUS_EACH)
    a, b = two_rentals(provisioning, host, orders_events, tmp_path, days=(3, 7), preparation="pytorch")
    uid = host.uid_of(a.user)
    forking = "trap '' TERM HUP INT; while :; do (trap '' TERM HUP INT; exec sleep 600) & sleep 0.02; done"
    started = a.run(f"setsid -f bash -c {shlex.quote(forking)} > /dev/null 2>&1 < /dev/null; sleep 1")
    assert started.returncode == 0, started.stderr
    assert len(processes_of(uid)) > 10

    clock.offset = timedelta(days=3, minutes=1)  # A's term is over, B's is not
    wait_until(lambda: access_of(provisioning, a.order_id) is None and host.uid_of(a.user) is None, "A reclaimed")
    assert processes_of(uid) == []
    assert not host.home_of(a.user).exists()
    assert gpu_files(host, a.user) == [] and len(gpu_files(host, b.user)) == GPUS_EACH
    assert b.run("true").returncode == 0 and access_of(provisioning, b.order_id) is not None
    assert provisioning.list_nodes()[0]["gpus_in_use"] == GPUS_EACH


def test_a_process_that_survives_the_reclaim_takes_the_node_out_of_service_and_keeps_its_gpus(
    provisioning, test_hosts, orders_events, clock, tmp_path
):
    host = test_hosts(gpus=2 * GPUS_EACH)
    a, b = two_rentals(provisioning, host, orders_events, tmp_path, days=(3, 7), preparation="pytorch")
    uid = host.uid_of(a.user)
    host.run_inside(out_of_reach(uid))  # out of the rental's reach
    before = REGISTRY.get_sample_value("kernodeck_reclaim_survivors_total") or 0

    clock.offset = timedelta(days=3, minutes=1)
    wait_until(lambda: provisioning.list_nodes()[0]["state"] == "maintenance", "the node out of service", 60)
    node = provisioning.list_nodes()[0]
    assert "survived its reclaim" in node["note"]
    assert node["gpus_in_use"] == 2 * GPUS_EACH  # A's GPUs are given to nobody
    assert REGISTRY.get_sample_value("kernodeck_reclaim_survivors_total") > before
    assert host.uid_of(a.user) == uid and a.run("true").returncode != 0  # its key and sessions are gone
    assert b.run("true").returncode == 0

    host.run_inside(f"pkill -KILL --euid {uid}")
    wait_until(lambda: provisioning.list_nodes()[0]["gpus_in_use"] == GPUS_EACH, "A reclaimed at last", 60)
    assert host.uid_of(a.user) is None and processes_of(uid) == []
    assert provisioning.list_nodes()[0]["state"] == "maintenance"


# Links a tenant could plant in its home, to files and folders of root's outside it: every name a step of
# delivery, readiness check or reclaim writes or reads there, and those earlier versions of the steps used.
LINKS = {
    ".ssh": "/etc/ssh/authorized_keys",
    ".ssh/authorized_keys": "/etc/kd-sentinel",
    ".kernodeck": "/etc/kd-sentinel-dir",
    ".kernodeck/env": "/etc/kd-sentinel",
    ".kernodeck/diagnostic.py": "/etc/kd-sentinel",
    ".kernodeck/jupyter.log": "/etc/kd-sentinel",
    ".kernodeck/jupyter-token": "/etc/kd-sentinel",
    ".kernodeck/jupyter.sock": "/etc/kd-sentinel",
    ".cache": "/etc/kd-sentinel-dir",
    ".cache/tmp": "/etc/kd-sentinel-dir",
    ".profile": "/etc/passwd",
    ".profile.new": "/etc/kd-sentinel",
    ".bashrc": "/etc/shadow",
    ".bashrc.new": "/etc/kd-sentinel",
}
WATCHED = ("etc/kd-sentinel", "etc/kd-sentinel-dir", "etc/passwd", "etc/shadow", "etc/group", "etc/ssh", "opt")


def _owner(home: Path) -> int | None:
    """The home's owner; None when it is not there (not made yet, or removed at reclaim while we look)."""
    try:
        return home.stat().st_uid if home.is_dir() else None
    except FileNotFoundError:
        return None


def _expired(host, user: str) -> bool:
    """Whether the reclaim has expired the user's account (its first step after the key, just before it kills
    every process of the user): from then on no process of the user's is left to plant anything."""
    for line in (host.root / "etc/shadow").read_text().splitlines():
        name, *fields = line.split(":")
        if name == user:
            return fields[6] == "1"
    return False


class Planter:
    """Plants LINKS in the user's home every few milliseconds while `on` (and one in /tmp), as the user would
    (the links are its own), until the reclaim expires the account and kills the user's processes, as it would a
    real planter's; `replace` moves what is there aside first. Never follows a link itself."""

    def __init__(self, host, user: str, replace: bool):
        self.host, self.user, self.replace, self.on = host, user, replace, True
        self.in_tmp = False  # planted once: the rental's processes are gone before its files there are wiped
        self.thread = eventlet.spawn(self._run)

    def stop(self):
        self.on = False
        self.thread.wait()

    def _run(self):
        while self.on:
            uid = self.host.uid_of(self.user)
            home = self.host.home_of(self.user)
            if uid is not None and _owner(home) == uid and not _expired(self.host, self.user):
                for name, target in LINKS.items():
                    self._plant(home, name, target, uid)
                if not self.in_tmp:
                    self._plant(self.host.root / "tmp", f"{self.user}-link", "/etc/kd-sentinel", uid)
                    self.in_tmp = True
            eventlet.sleep(0.003)

    def _plant(self, folder: Path, name: str, target: str, uid: int):
        path = folder / name
        try:
            if any(
                parent.is_symlink() for parent in (folder / part for part in Path(name).parents if str(part) != ".")
            ):
                return  # its folder is a link already: planting there would write where it leads
            if path.is_symlink():
                return
            if os.path.lexists(path):
                if not self.replace:
                    return
                os.rename(path, f"{path}.moved")
            os.symlink(target, path)
            os.lchown(path, uid, uid)
        except OSError:
            pass  # the step moved it meanwhile: next round


def snapshot(host) -> dict:
    """Mode, owner and bytes of everything under WATCHED in the host (authorized keys of rentals aside)."""
    seen = {}
    for top in WATCHED:
        root = host.root / top
        for path in [root, *sorted(root.rglob("*"))] if root.is_dir() else [root]:
            if "__pycache__" in path.parts:
                continue  # what root's own Python compiles in /opt
            info = path.lstat()
            content = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            seen[str(path.relative_to(host.root))] = (info.st_mode, info.st_uid, info.st_gid, content)
    return seen


def owned_by_rentals(host) -> list[str]:
    """Files anywhere in the host's own folders that belong to a rental's UID."""
    return [
        str(path)
        for top in ("etc", "home", "tmp", "var/tmp", "opt")
        for path in (host.root / top).rglob("*")
        if path.lstat().st_uid >= RENTAL_UID_FIRST
    ]


def test_links_planted_in_the_home_at_every_moment_change_nothing_outside_it(test_hosts, keys, tmp_path):
    host = test_hosts(gpus=2 * GPUS_EACH)
    (host.root / "etc/kd-sentinel").write_text("untouched\n")
    (host.root / "etc/kd-sentinel").chmod(0o600)
    (host.root / "etc/kd-sentinel-dir").mkdir(mode=0o700)
    (host.root / "etc/kd-sentinel-dir/file").write_text("untouched\n")
    before = snapshot(host)
    node = Node("n", host.host, host.port, host.host_key, "h100", "cuda", 2 * GPUS_EACH, NodeState.AVAILABLE,
                datetime.now(UTC), isolation=Isolation.KERNEL)  # fmt: skip
    agent = SshHosts(str(keys[0]), accept_gpu_double=True)
    _, public = customer_key(tmp_path)

    # From the home's first moment: the delivery, its readiness check, the reclaim that undoes it.
    first = DeliveryJob("o1", node, (0, 1), "kdlinks1", public, "notebook")
    planter = Planter(host, first.unix_user, replace=False)
    try:
        agent.deliver(first)
    except NodeRefused as refused:
        assert not refused.leftover, refused  # whatever the links broke, the delivery was undone
    finally:
        planter.stop()
    agent.reclaim(node, first.unix_user)
    assert host.uid_of(first.unix_user) is None

    # Once delivered: every root step again, what is in the home moved aside for links, then the reclaim.
    second = DeliveryJob("o2", node, (2, 3), "kdlinks2", public, "notebook")
    agent.deliver(second)
    planter = Planter(host, second.unix_user, replace=True)
    try:
        eventlet.sleep(0.05)
        with agent._session(node) as client:
            env = agent._env(second)
            for step in ("create-user.sh", "prepare-notebook.sh", "readiness.sh", "install-key.sh"):
                agent._exec(client, step, env)  # failing or not: nothing outside the home may change
        agent.reclaim(node, second.unix_user)
    finally:
        planter.stop()
    assert host.uid_of(second.unix_user) is None
    assert snapshot(host) == before
    assert owned_by_rentals(host) == []
