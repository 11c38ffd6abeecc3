"""Delivery on real SSH test hosts: a paid order gets a user the customer logs into, until the term ends."""

import socket
import subprocess
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest
from nameko.exceptions import RemoteError

from kernodeck_provisioning.domain import DeliveryJob, Node, NodeState
from kernodeck_provisioning.hosts import NodeRefused, SshHosts
from services.provisioning.tests.conftest import customer_key, wait_until


def ssh(host, private_key, user, command, known_hosts):
    return subprocess.run(
        [
            "ssh", "-i", str(private_key), "-p", str(host.port), "-o", "BatchMode=yes",
            "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={known_hosts}",
            "-o", "ConnectTimeout=5", f"{user}@{host.host}", command,
        ],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip


@contextmanager
def tunnel(host, private_key, user, remote_socket, known_hosts):
    """`ssh -N -L` from a free local port to a Unix socket on the host, as the rental's access shows it; the
    local port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            "ssh", "-N", "-L", f"{port}:{remote_socket}", "-i", str(private_key), "-p", str(host.port),
            "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={known_hosts}",
            "-o", "ExitOnForwardFailure=yes", f"{user}@{host.host}",
        ],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        yield port
    finally:
        # ssh now and then lives on after SIGTERM (seen: caught, nothing pending, still forwarding minutes on),
        # which held a whole lane until its timeout: a few seconds, then SIGKILL.
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def http_status(url: str) -> int | str:
    """The HTTP status, or what broke before one came (the tunnel's far end refused)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except (OSError, urllib.error.URLError) as error:
        return type(error).__name__


def pinned(tmp_path, host):
    known = tmp_path / f"known_hosts_{host.name}"
    known.write_text(
        f"[{host.host}]:{host.port} {host.host_key}\n" if host.port != 22 else f"{host.host} {host.host_key}\n"
    )
    return known


def register(provisioning, host, model="h100"):
    """Added, then checked (as `kernodeck-admin nodes add-node` does): the node as its check left it."""
    added = provisioning.add_node(host.host, host.port, host.host_key, model, host.gpus)
    return provisioning.check_node(added["id"])


def access_of(provisioning, order_id):
    return provisioning.get_access("acct", [order_id]).get(order_id)


def test_paid_order_is_delivered_logged_into_and_wiped_at_the_end(
    provisioning, test_hosts, orders_events, clock, tmp_path
):
    host = test_hosts(gpus=4)
    register(provisioning, host)
    private, public = customer_key(tmp_path)
    created, paid = orders_events
    created("order1", gpus=2, key=public, days=3)
    held = wait_until(lambda: _try_hold(provisioning, "order1", 2), "the hold")
    assert held["new"] is True
    paid("order1")

    access = wait_until(lambda: access_of(provisioning, "order1"), "the access", seconds=60)
    assert (access["ssh_host"], access["ssh_port"]) == (host.host, host.port)
    assert access["jupyter_url"] is None and access["jupyter_token"] is None
    known = pinned(tmp_path, host)
    logged_in = ssh(host, private, access["ssh_user"], 'echo "$CUDA_VISIBLE_DEVICES"; echo results > out.txt', known)
    assert logged_in.returncode == 0, logged_in.stderr
    assert logged_in.stdout.strip() == "0,1"  # the rental's GPUs only
    assert (host.home_of(access["ssh_user"]) / "out.txt").exists()
    assert provisioning.get_access("someone-else", ["order1"]) == {}

    clock.offset = timedelta(days=3, minutes=1)  # the term is over
    wait_until(lambda: not host.home_of(access["ssh_user"]).exists(), "the files wiped")
    assert ssh(host, private, access["ssh_user"], "true", known).returncode != 0
    assert access_of(provisioning, "order1") is None
    assert wait_until(lambda: _nodes(provisioning)[0]["gpus_in_use"] == 0, "the GPUs freed")


def test_a_refusing_host_makes_delivery_go_to_the_next(provisioning, test_hosts, orders_events, tmp_path):
    failing = test_hosts(gpus=1, mode="cpu")  # its readiness check finds no GPU
    down = test_hosts(gpus=1)
    down.stop_sshd()
    impostor = test_hosts(gpus=1)
    good = test_hosts(gpus=1)
    # Nodes are tried in the order they were added (all equally free): the three refusing ones first.
    register(provisioning, failing)
    register(provisioning, down)
    provisioning.add_node(impostor.host, impostor.port, good.host_key, "h100", 1)  # pinned to another key
    register(provisioning, good)
    _, public = customer_key(tmp_path)
    created, paid = orders_events
    created("order2", key=public)
    wait_until(lambda: _try_hold(provisioning, "order2", 1), "the hold")
    paid("order2")
    access = wait_until(lambda: access_of(provisioning, "order2"), "the access", seconds=90)
    assert access["ssh_host"] == good.host
    nodes = {node["host"]: node for node in _nodes(provisioning)}
    assert [nodes[h.host]["state"] for h in (failing, down, impostor, good)] == ["maintenance"] * 3 + ["available"]
    assert "cpu_fallback" in nodes[failing.host]["note"]
    assert "connect" in nodes[down.host]["note"]
    assert "another SSH host key" in nodes[impostor.host]["note"]


def test_the_notebook_preparation_serves_jupyter_through_ssh_behind_its_token(
    provisioning, test_hosts, orders_events, tmp_path
):
    host = test_hosts(gpus=2, backend="rocm")
    register(provisioning, host, model="mi300x")
    private, public = customer_key(tmp_path)
    created, paid = orders_events
    created("order3", model="mi300x", preparation="notebook", key=public)
    wait_until(lambda: _try_hold(provisioning, "order3", 1, "mi300x"), "the hold")
    paid("order3")
    access = wait_until(lambda: access_of(provisioning, "order3"), "the access", seconds=60)
    user, token = access["ssh_user"], access["jupyter_token"]
    socket_path = f"/home/{user}/.kernodeck/jupyter.sock"
    assert access["jupyter_tunnel"] == f"ssh -N -L 8888:{socket_path} -p {host.port} {user}@{host.host}"
    assert access["jupyter_url"] == "http://127.0.0.1:8888/lab"
    assert len(token) >= 32
    with tunnel(host, private, user, socket_path, pinned(tmp_path, host)) as port:
        assert http_status(f"http://127.0.0.1:{port}/lab?token={token}") == 200
        assert http_status(f"http://127.0.0.1:{port}/lab?token=not-{token}") == 403


def test_a_node_added_twice_is_refused_over_rpc(provisioning, test_hosts):
    host = test_hosts()
    register(provisioning, host)
    with pytest.raises(RemoteError) as refused:
        register(provisioning, host)
    assert refused.value.code == "already_exists"


def _try_hold(provisioning, order_id, gpus, model="h100"):
    until = (datetime.now(UTC) + timedelta(minutes=30)).isoformat()
    return provisioning.hold_capacity(order_id, "acct", model, gpus, until)


def _nodes(provisioning):
    return provisioning.list_nodes()


def test_a_production_agent_refuses_a_node_running_the_gpu_double(test_hosts, keys, tmp_path):
    host = test_hosts(gpus=1)
    node = Node("n", host.host, host.port, host.host_key, "h100", "cuda", 1, NodeState.AVAILABLE, datetime.now(UTC))
    _, public = customer_key(tmp_path)
    job = DeliveryJob("o", node, (0,), "kdprod", public, "pytorch")
    with pytest.raises(NodeRefused, match="GPU double"):
        SshHosts(str(keys[0]), accept_gpu_double=False).deliver(job)


def test_an_order_paid_before_its_creation_reached_provisioning_is_asked_of_orders(
    provisioning, test_hosts, orders_events, orders_double, tmp_path
):
    host = test_hosts(gpus=1)
    register(provisioning, host)
    _, public = customer_key(tmp_path)
    summary = {
        "model": "h100",
        "duration_days": 3,
        "lots": 1,
        "total_gpus": 1,
        "preparation": "ubuntu",
        "total_usd_cents": 1,
    }
    orders_double.known["order5"] = {"id": "order5", "account_id": "acct", "summary": summary, "ssh_public_key": public}
    _created, paid = orders_events
    wait_until(lambda: _try_hold(provisioning, "order5", 1), "the hold")
    paid("order5")  # no OrderCreated at all
    assert wait_until(lambda: access_of(provisioning, "order5"), "the access", seconds=60)["ssh_host"] == host.host
