"""The kit's `rpc` entrypoint against the real broker, called by nameko's own client: each caller gets its own
reply, large ones included, errors travel as nameko's, and replies keep coming after the broker closed the
connection they are published on."""

import eventlet
import eventlet.event
import pytest
from nameko.exceptions import IncorrectSignature, RemoteError
from nameko.standalone.rpc import ClusterRpcProxy
from nameko.timer import timer

from kernodeck_kit.transport.calls import RemoteServiceError
from kernodeck_kit.transport.rpc import rpc

# Over the broker's frame size (128 KiB): a reply of several body frames.
LARGE = "x" * 300_000


class Echoer:
    name = "echoer"

    @rpc
    def echo(self, value, large=False):
        eventlet.sleep(0)  # let the other calls' workers run in between
        return f"{LARGE}{value}" if large else value

    @rpc
    def unencodable(self):
        return object()


@pytest.fixture
def echoer(container_factory, rabbit_config):
    container_factory(Echoer, rabbit_config).start()
    with ClusterRpcProxy(rabbit_config, timeout=30) as cluster:
        yield cluster.echoer


def test_concurrent_calls_each_get_their_own_reply(echoer):
    small = [(n, echoer.echo.call_async(n)) for n in range(100)]
    large = [(n, echoer.echo.call_async(n, large=True)) for n in range(20)]
    assert [reply.result() for _, reply in small] == [n for n, _ in small]
    assert [reply.result() for _, reply in large] == [f"{LARGE}{n}" for n, _ in large]


def test_errors_travel_as_nameko_reports_them(echoer):
    with pytest.raises(IncorrectSignature):
        echoer.echo(1, 2, 3)
    with pytest.raises(RemoteError) as unencodable:
        echoer.unencodable()
    assert unencodable.value.exc_type == "UnserializableValueError"
    assert echoer.echo("still answering") == "still answering"


@pytest.mark.parametrize(
    ("args", "kwargs", "fields"),
    [
        (("a\x00b",), {}, ["value"]),
        ((["ok", {"note": "\ud800"}],), {}, ["value.1.note"]),
        ((), {"value": {"k\x00": 1}}, ["value.k\\x00"]),
        (("ok",), {"large": "\x00"}, ["large"]),
    ],
)
def test_nul_or_a_lone_surrogate_in_any_argument_is_refused_before_the_entrypoint(echoer, args, kwargs, fields):
    with pytest.raises(RemoteServiceError) as refused:
        echoer.echo(*args, **kwargs)
    assert (refused.value.code, [e["field"] for e in refused.value.errors]) == ("validation_error", fields)


def test_other_text_reaches_the_entrypoint(echoer):
    for value in ["", "\x01\x7f", "Nguyễn 😀", {"nested": ["\ue000"]}, 7, None]:
        assert echoer.echo(value) == value


class Gate:
    """A timer's worker holds the only slot of the worker pool until the gate opens."""

    name = "gate"
    held = eventlet.event.Event()
    opened = eventlet.event.Event()

    @timer(interval=3600, eager=True)
    def hold(self):
        Gate.held.send()
        Gate.opened.wait()

    @rpc
    def echo(self, value):
        return value


def test_a_request_finding_the_worker_pool_full_is_answered_once_there_is_room(
    container_factory, rabbit_config, rabbit_manager
):
    container_factory(Gate, {**rabbit_config, "max_workers": 1}).start()
    Gate.held.wait()
    with ClusterRpcProxy(rabbit_config, timeout=30) as cluster:
        reply = cluster.gate.echo.call_async("after the timer")
        with eventlet.Timeout(60):  # until the service holds the request (the management API's statistics lag)
            while not rabbit_manager.get_queue(rabbit_config["vhost"], "rpc-gate").get("messages_unacknowledged"):
                eventlet.sleep(0.2)
        Gate.opened.send()
        assert reply.result() == "after the timer"


def reply_connections(rabbit_manager, vhost: str) -> list[str]:
    return [
        connection["name"]
        for connection in rabbit_manager._get("vhosts", vhost, "connections")
        if connection.get("client_properties", {}).get("connection_name") == "echoer rpc replies"
    ]


def test_replies_arrive_after_the_broker_closed_their_connection(echoer, rabbit_manager, rabbit_config):
    assert echoer.echo("before") == "before"
    with eventlet.Timeout(60):
        while not (names := reply_connections(rabbit_manager, rabbit_config["vhost"])):
            eventlet.sleep(0.2)  # the management API lists connections as of its last statistics
    assert len(names) == 1
    rabbit_manager.delete_connection(names[0])
    with eventlet.Timeout(60):
        while reply_connections(rabbit_manager, rabbit_config["vhost"]):
            eventlet.sleep(0.2)
    assert [echoer.echo(n) for n in range(3)] == [0, 1, 2]
