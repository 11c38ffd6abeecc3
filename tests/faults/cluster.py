"""A three-node RabbitMQ cluster of the fault suite's own, behind one address, as Kubernetes gives it.

The nodes run from the machine's rabbitmq-server like servers.Broker (the rabbitmq user, free ports, data in
a temporary directory), node 2 and 3 joined to node 1; the `kernodeck` vhost makes quorum queues by default,
as production's does (kernodeck_kit.bus_users.create_vhost's definitions). Clients connect to a TCP balancer
on loopback that hands each new connection to the next node that accepts it, as the Service `rabbitmq` does
in a cluster: when a node stops, its connections drop and the clients' reconnections land on the others.
"""

import json
import select
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.faults.servers import Broker, _configured_broker, _directory, _wait

VHOST = "kernodeck"
DEFINITIONS = {
    "vhosts": [{"name": VHOST, "metadata": {"default_queue_type": "quorum", "description": "Kernodeck"}}],
    "permissions": [{"user": "guest", "vhost": VHOST, "configure": ".*", "write": ".*", "read": ".*"}],
}


class Balancer:
    """A TCP proxy: each accepted connection goes to the next of `ports` that accepts it, bytes both ways."""

    def __init__(self, ports: list[int]):
        self.ports = ports
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._next = 0
        self._stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = self._connect()
            if upstream is None:
                client.close()
                continue
            threading.Thread(target=self._pipe, args=(client, upstream), daemon=True).start()

    def _connect(self) -> socket.socket | None:
        for _ in self.ports:
            port = self.ports[self._next % len(self.ports)]
            self._next += 1
            try:
                return socket.create_connection(("127.0.0.1", port), timeout=2)
            except OSError:
                continue
        return None

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        b.settimeout(None)
        peers = {a: b, b: a}
        try:
            while True:
                readable, _, _ = select.select(list(peers), [], [])
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    peers[sock].sendall(data)
        except OSError:
            return
        finally:
            a.close()
            b.close()

    def close(self) -> None:
        self._stopped.set()
        self.listener.close()


@dataclass
class Cluster:
    nodes: list[Broker]
    balancer: Balancer
    stopped: list[Broker] = field(default_factory=list)

    @property
    def amqp_uri(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.balancer.port}/{VHOST}"

    def stop(self, node: Broker) -> None:
        """The node stops (rabbitmqctl stop): its connections drop, its queue replicas are gone."""
        node.stop()
        self.stopped.append(node)

    def running(self) -> list[Broker]:
        return [n for n in self.nodes if n not in self.stopped]

    def quorum_queues(self) -> dict[str, dict]:
        """Every queue of the vhost with its type, leader and members, as a running node reports them."""
        node = self.running()[0]
        done = subprocess.run(
            ["rabbitmqctl", "-n", node.node, "list_queues", "-p", VHOST, "--formatter", "json",
             "name", "type", "leader", "members", "messages"],
            check=True, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        return {q["name"]: q for q in json.loads(done.stdout)}


@contextmanager
def own_cluster(size: int = 3) -> Iterator[Cluster]:
    with ExitStack() as stack:
        nodes = []
        for _ in range(size):
            directory = stack.enter_context(_directory("rabbitmq"))
            node = _configured_broker(directory)
            stack.callback(node.stop)
            nodes.append(node)
        starting = [threading.Thread(target=node.start) for node in nodes]
        for thread in starting:
            thread.start()
        for thread in starting:
            thread.join()
        for node in nodes[1:]:
            node.ctl("stop_app")
            node.ctl("join_cluster", nodes[0].node)
            node.ctl("start_app")
            _wait(lambda n=node: _listening_amqp(n), 60, "a joined node")
        definitions = Path(nodes[0].directory) / "definitions.json"
        definitions.write_text(json.dumps(DEFINITIONS))
        subprocess.run(["chown", "rabbitmq:", str(definitions)], check=True)
        nodes[0].ctl("import_definitions", str(definitions))
        balancer = Balancer([node.port for node in nodes])
        stack.callback(balancer.close)
        yield Cluster(nodes, balancer)


def _listening_amqp(node: Broker) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", node.port)) == 0
