"""Baseline: the gateway's RpcClient against a trivial aio-pika responder, no nameko.

The responder speaks nameko's RPC reply protocol with the least work possible
(no-ack consumption, reply published without confirms), on its own connection
but in the same process and event loop. Set against RpcClient -> nameko
figures, the difference is what the nameko service side costs.

    python bench/bench_amqp_baseline.py [--url AMQP_URL] [--total N]
"""

import argparse
import asyncio
import json
import uuid

import aio_pika

from bench.measure import line, measure
from kernodeck_gateway.rpc import DEFAULT_URL, RPC_EXCHANGE, RpcClient


async def _start_responder(url: str, service: str) -> aio_pika.abc.AbstractConnection:
    connection = await aio_pika.connect(url)
    channel = await connection.channel(publisher_confirms=False)
    exchange = await channel.declare_exchange(RPC_EXCHANGE, aio_pika.ExchangeType.TOPIC, durable=True)
    queue = await channel.declare_queue(f"rpc-{service}", exclusive=True, auto_delete=True)
    await queue.bind(exchange, f"{service}.*")

    async def echo(message: aio_pika.abc.AbstractIncomingMessage) -> None:
        request = json.loads(message.body)
        reply = json.dumps({"result": request["args"][0], "error": None}).encode()
        await exchange.publish(
            aio_pika.Message(reply, content_type="application/json", correlation_id=message.correlation_id),
            routing_key=message.reply_to or "",
        )

    await queue.consume(echo, no_ack=True)
    return connection


async def bare_amqp_roundtrip(concurrency: int, total: int, *, url: str = DEFAULT_URL) -> dict:
    """Echo calls through RpcClient to a bare aio-pika responder; see `measure`."""
    service = f"bench_{uuid.uuid4().hex[:12]}"
    responder = await _start_responder(url, service)
    client = RpcClient(url, name="bench")
    await client.connect()
    try:
        return await measure(lambda i: client.call(service, "echo", i), concurrency, total)
    finally:
        await client.close()
        await responder.close()


async def _main(url: str, total: int) -> None:
    for concurrency in (1, 32):
        result = await bare_amqp_roundtrip(concurrency, total, url=url)
        print(line("bare AMQP round trip", result))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=DEFAULT_URL)
    parser.add_argument("--total", type=int, default=5000)
    arguments = parser.parse_args()
    asyncio.run(_main(arguments.url, arguments.total))
