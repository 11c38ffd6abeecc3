"""RpcClient against a real nameko service (a subprocess) on a real RabbitMQ, answering through nameko's `rpc`
entrypoint and through the kit's, which every service uses.

The broker is AMQP_URI (default: the local RabbitMQ). Each test runs its own
event loop with asyncio.run; eventlet only ever runs in the service process.
"""

import asyncio
import logging
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import aio_pika
import pytest

from kernodeck_gateway.rpc import RemoteError, RpcClient, RpcTimeout, ServiceUnavailable

AMQP_URI = os.environ.get("AMQP_URI", "amqp://guest:guest@127.0.0.1:5672/")
FIXTURE_DIR = Path(__file__).parent / "rpc_fixture"

pytestmark = pytest.mark.timeout(60)


async def _wait_until_answers(name: str, deadline: float) -> None:
    client = RpcClient(AMQP_URI, timeout=1)
    await client.connect()
    try:
        while True:
            try:
                await client.call(name, "echo", "ready")
                return
            except (ServiceUnavailable, RpcTimeout):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.2)
    finally:
        await client.close()


async def _delete_queue(queue_name: str) -> None:
    connection = await aio_pika.connect(AMQP_URI)
    async with connection:
        channel = await connection.channel()
        await channel.queue_delete(queue_name)


@pytest.fixture(scope="module", params=["nameko", "kit"])
def service(request, tmp_path_factory):
    """The name of a running echo service, unique to this test run."""
    name = f"echo_{uuid.uuid4().hex[:12]}"
    log_path = tmp_path_factory.mktemp("echo") / "service.log"
    env = {**os.environ, "ECHO_SERVICE_NAME": name, "ECHO_ENTRYPOINT": request.param, "EVENTLET_NO_GREENDNS": "yes"}
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "nameko", "run", "--broker", AMQP_URI, "echo_service"],
            cwd=FIXTURE_DIR,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    try:
        try:
            asyncio.run(_wait_until_answers(name, time.monotonic() + 30))
        except (ServiceUnavailable, RpcTimeout):
            pytest.fail(f"echo service did not answer:\n{log_path.read_text()}")
        yield name
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        # nameko declares its service queue durable: do not leave one per run.
        asyncio.run(_delete_queue(f"rpc-{name}"))


def run_with_client(scenario, **options):
    """Run `await scenario(client)` with a connected RpcClient on a fresh loop."""

    async def main():
        client = RpcClient(AMQP_URI, **options)
        await client.connect()
        try:
            return await scenario(client)
        finally:
            await client.close()

    return asyncio.run(main())


def test_call_returns_the_result(service):
    async def scenario(client):
        return await client.call(service, "echo", {"a": [1, "b", None, 2.5]})

    assert run_with_client(scenario) == {"a": [1, "b", None, 2.5]}


def test_args_and_kwargs(service):
    async def scenario(client):
        return (
            await client.call(service, "add", 2, 3),
            await client.call(service, "add", 2, b=3),
            await client.call(service, "add", a="x", b="y"),
        )

    assert run_with_client(scenario) == (5, 5, "xy")


def test_kombu_json_types_cross_the_wire(service):
    values = [
        datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC),
        date(2025, 1, 2),
        Decimal("1234.50"),
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
        b"text",
        b"\xff\x00",
    ]

    async def scenario(client):
        return (
            await client.call(service, "type_names", *values),
            await client.call(service, "echo", values),
        )

    names, echoed = run_with_client(scenario)
    assert names == ["datetime", "date", "Decimal", "UUID", "bytes", "bytes"]
    assert echoed == values


def test_call_id_stack_reaches_the_service(service):
    async def scenario(client):
        return await client.call(service, "call_ids")

    caller, callee = run_with_client(scenario, name="gw-test")
    assert caller.startswith("gw-test.call.")
    assert callee.startswith(f"{service}.call_ids.")


def test_concurrent_calls_get_their_own_answers(service):
    async def scenario(client):
        results = await asyncio.gather(*(client.call(service, "echo", f"value-{i}") for i in range(200)))
        return results, dict(client._pending)

    results, pending = run_with_client(scenario)
    assert results == [f"value-{i}" for i in range(200)]
    assert pending == {}


def test_remote_exception_becomes_remote_error(service):
    async def scenario(client):
        errors = []
        for method, args in (("fail", (1, "why")), ("no_such_method", ())):
            with pytest.raises(RemoteError) as caught:
                await client.call(service, method, *args)
            errors.append(caught.value)
        return errors

    refused, not_found = run_with_client(scenario)
    assert refused.exc_type == "Refused"
    assert refused.exc_path == "echo_service.Refused"
    assert refused.exc_args == ["1", "why"]  # nameko sends every non-string arg as str()
    assert refused.value == "(1, 'why')"
    assert not_found.exc_type == "MethodNotFound"
    assert not_found.exc_args == ["no_such_method"]


def test_timeout_then_late_reply_is_ignored(service, caplog):
    caplog.set_level(logging.DEBUG, logger="kernodeck_gateway.rpc")

    async def scenario(client):
        started = time.monotonic()
        with pytest.raises(RpcTimeout):
            await client.call(service, "slow", 0.5, timeout=0.2)
        elapsed = time.monotonic() - started
        pending = dict(client._pending)
        await asyncio.sleep(0.6)  # the slow reply arrives meanwhile
        return elapsed, pending, await client.call(service, "echo", "after")

    elapsed, pending, after = run_with_client(scenario)
    assert 0.2 <= elapsed < 0.45
    assert pending == {}
    assert after == "after"
    messages = [record.getMessage() for record in caplog.records]
    assert any(message.startswith("ignoring a reply nobody waits for") for message in messages)
    assert not [record for record in caplog.records if record.levelno >= logging.WARNING]


def test_unknown_service_fails_fast(service):
    async def scenario(client):
        started = time.monotonic()
        with pytest.raises(ServiceUnavailable):
            await client.call(f"nosuch_{uuid.uuid4().hex}", "echo", 1, timeout=5)
        return time.monotonic() - started, await client.call(service, "echo", "still fine")

    elapsed, still_fine = run_with_client(scenario)
    assert elapsed < 1
    assert still_fine == "still fine"


def test_request_to_a_stopped_service_expires():
    # A stopped nameko service leaves its durable queue bound: the request is
    # routable, nobody answers, and the broker must drop it at the timeout.
    name = f"stopped_{uuid.uuid4().hex[:12]}"

    async def scenario(client):
        connection = await aio_pika.connect(AMQP_URI)
        async with connection:
            channel = await connection.channel()
            exchange = await channel.declare_exchange("nameko-rpc", aio_pika.ExchangeType.TOPIC, durable=True)
            queue = await channel.declare_queue(f"rpc-{name}", durable=True)
            await queue.bind(exchange, f"{name}.*")
            try:
                with pytest.raises(RpcTimeout):
                    await client.call(name, "echo", 1, timeout=0.2)
                await asyncio.sleep(0.2)
                return await queue.get(fail=False)
            finally:
                await queue.delete(if_unused=False, if_empty=False)

    assert run_with_client(scenario) is None


def test_unreachable_broker_raises_service_unavailable():
    async def scenario():
        client = RpcClient("amqp://guest:guest@127.0.0.1:1/", timeout=2)
        with pytest.raises(ServiceUnavailable):
            await client.call("anything", "echo", 1)
        started = time.monotonic()
        with pytest.raises(ServiceUnavailable):
            await client.connect()
        return time.monotonic() - started

    assert asyncio.run(scenario()) < 2


def test_lost_connection_fails_pending_calls_then_recovers(service):
    async def scenario(client):
        pending_call = asyncio.ensure_future(client.call(service, "slow", 2))
        await asyncio.sleep(0.3)  # published and being served
        dropped = time.monotonic()
        # What aio-pika's RobustConnection.reconnect() does to a live link.
        await client._connection.transport.connection.close(ConnectionResetError("test"))
        with pytest.raises(ServiceUnavailable):
            await pending_call
        failed_after = time.monotonic() - dropped
        while True:
            try:
                return failed_after, await client.call(service, "echo", "back")
            except ServiceUnavailable:
                assert time.monotonic() - dropped < 10, "no reconnection"
                await asyncio.sleep(0.1)

    failed_after, back = run_with_client(scenario, reconnect_interval=0.2)
    assert failed_after < 1
    assert back == "back"


def test_close_fails_pending_calls_and_connect_again_works(service):
    async def scenario():
        client = RpcClient(AMQP_URI)
        await client.connect()
        pending_call = asyncio.ensure_future(client.call(service, "slow", 1))
        await asyncio.sleep(0.2)
        await client.close()
        with pytest.raises(ServiceUnavailable):
            await pending_call
        with pytest.raises(ServiceUnavailable):
            await client.call(service, "echo", 1)
        await client.connect()
        try:
            return await client.call(service, "echo", "again")
        finally:
            await client.close()

    assert asyncio.run(scenario()) == "again"


def test_client_module_does_not_import_eventlet():
    # The gateway runs on asyncio: nameko (which imports eventlet) must stay out.
    code = "import sys, kernodeck_gateway.rpc; sys.exit('eventlet' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
