"""Payment intents through the gateway, and the time from a confirmed transfer to the order's paid event.

Imported by bench/run.py, which starts the stack; `confirmed_to_paid` speaks
to the broker directly: it publishes the watcher's `transfer_confirmed`
exactly as a watcher would and waits for orders' `order_status_changed`.
"""

import asyncio
import json
import time
import uuid
from datetime import UTC, datetime

import aio_pika
import httpx

from bench.measure import measure, percentiles

ORDER = {"model": "rtx4090", "duration_days": 3, "lots": 1, "preparation": "ubuntu"}


class PaidEvents:
    """orders' `order_status_changed` events, as a future per order that resolves on `paid` to the
    `time.perf_counter()` of its arrival. Its `channel` serves for publishing too."""

    def __init__(self, amqp_uri: str):
        self.amqp_uri = amqp_uri
        self.waiting: dict[str, asyncio.Future] = {}

    async def __aenter__(self):
        self.connection = await aio_pika.connect(self.amqp_uri)
        self.channel = await self.connection.channel()
        exchange = await self.channel.declare_exchange("orders.events", aio_pika.ExchangeType.TOPIC, durable=True)
        queue = await self.channel.declare_queue(exclusive=True, auto_delete=True)
        await queue.bind(exchange, "order_status_changed")
        await queue.consume(self._on_message, no_ack=True)
        return self

    async def __aexit__(self, *exc):
        await self.connection.close()

    def expect(self, order_id: str) -> asyncio.Future:
        self.waiting[order_id] = asyncio.get_running_loop().create_future()
        return self.waiting[order_id]

    async def _on_message(self, message: aio_pika.abc.AbstractIncomingMessage) -> None:
        body = json.loads(message.body)
        future = self.waiting.get(body["order_id"])
        if body["status"] == "paid" and future is not None and not future.done():
            future.set_result(time.perf_counter())


async def intent_creation(url: str, auth: dict, concurrency: int, total: int, order: dict = ORDER) -> dict:
    """POST /api/v1/orders/{id}/payments (BTC on bitcoin: derivation included), one fresh `order` per call."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, headers=auth, timeout=30) as client:
        order_ids = [
            (await client.post("/api/v1/orders", json=order)).json()["id"] for _ in range(total + 100)
        ]  # 100 more for the warm-up

        async def call(i: int) -> None:
            response = await client.post(
                f"/api/v1/orders/{order_ids[i]}/payments", json={"asset": "BTC", "network": "bitcoin"}
            )
            if response.status_code != 201:
                raise RuntimeError(f"intent: {response.status_code} {response.text}")

        return await measure(call, concurrency, total)


async def confirmed_to_paid(
    url: str, auth: dict, amqp_uri: str, samples: int, asset: str = "BTC", network: str = "bitcoin"
) -> dict:
    """Milliseconds from publishing `transfer_confirmed` to receiving the order's `paid` event (an order paid in
    `asset` on `network`)."""
    method = {"asset": asset, "network": network}
    async with PaidEvents(amqp_uri) as paid, httpx.AsyncClient(base_url=url, headers=auth, timeout=30) as client:
        chain = await paid.channel.declare_exchange("chain.events", aio_pika.ExchangeType.TOPIC, durable=True)
        latencies = []
        for n in range(samples):
            order = (await client.post("/api/v1/orders", json=ORDER)).json()
            response = await client.post(f"/api/v1/orders/{order['id']}/payments", json=method)
            if response.status_code != 201:
                raise RuntimeError(f"intent: {response.status_code} {response.text}")
            payment = response.json()
            waiting = paid.expect(order["id"])
            event = {
                "version": 1,
                "event_id": uuid.uuid4().hex,
                "occurred_at": datetime.now(UTC).isoformat(),
                "network": network,
                "txid": uuid.uuid4().hex * 2,
                "index": 0,
                "address": payment["address"],
                "token": None,
                "amount": int(payment["amount_base_units"]),
                "block_height": 1000 + n,
                "block_hash": uuid.uuid4().hex * 2,
                "confirmations": 100,  # past any network's requirement
                "sequence": n + 1,
            }
            started = time.perf_counter()
            await chain.publish(
                aio_pika.Message(json.dumps(event).encode(), content_type="application/json"),
                routing_key="transfer_confirmed",
            )
            latencies.append(await asyncio.wait_for(waiting, timeout=10) - started)
    return {"samples": samples, **percentiles(latencies)}
