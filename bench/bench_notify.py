"""Notify: event published -> message accepted by the Bot API, under Telegram's documented limits.

`kernodeck-notify` runs with its defaults (30 messages a second, one a second
per chat) on a fresh vhost and PostgreSQL database, against the Bot API
double enforcing those limits (a message over them gets a 429 and counts as
a violation). 100 chats are linked as customers link them. Then:

- idle: one event at a time, each to a chat that has had nothing for a
  second: the pipeline's own latency, next to its floor measured in the same
  run (a bare AMQP publish -> consume, plus a bare sendMessage to the double);
- burst: 1,000 events over the 100 chats published at once: latency p50 and
  p99, the sustained rate against the 30/s limit, and the latency the limit
  alone imposes (the k-th message cannot leave before k/30 s after the first
  was published, nor before its own event is).

    python bench/bench_notify.py
"""

import asyncio
import json
import os
import secrets
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aio_pika
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.measure import percentiles
from infra.devnet.telegram_double import TelegramDouble
from infra.local.isolation import temporary_databases, temporary_vhost
from infra.local.stack import BIN, Process, free_port, metrics_show
from kernodeck_contracts.events import Event, OrderCreated, TelegramLinkRequested, telegram_token_hash
from kernodeck_kit.tables import OutboxMessage
from kernodeck_kit.transport.publish import amqp_publisher

CHATS = 100
BURST = 1000
IDLE = 50
LIMIT_PER_S = 30  # Telegram's documented overall limit, notify's default


class Publisher:
    def __init__(self, amqp_uri: str):
        self.send = amqp_publisher(amqp_uri)

    def __call__(self, event: Event) -> float:
        """Publish as the services' outboxes do; returns time.monotonic() just before."""
        row = OutboxMessage(
            event_id=event.event_id, source=event.source, event_type=event.type, payload=json.dumps(event.to_message())
        )
        started = time.monotonic()
        self.send(row)
        return started


def order(account: int, n: int) -> OrderCreated:
    return OrderCreated(
        order_id=f"b{account:03d}x{n:04d}",
        account_id=f"{account:032x}",
        model_id="rtx4090",
        duration_days=3,
        lots=1,
        total_gpus=1,
        preparation="ubuntu",
        total_usd_cents=9_900,
    )


def accepted_at(double: TelegramDouble) -> dict[str, float]:
    """When the double accepted each order message, by order id."""
    return {m.text.split()[1]: m.at for m in double.api.messages() if m.text.startswith("Order ")}


def wait(double: TelegramDouble, count: int, timeout: float) -> None:
    if not double.api.wait_for(lambda: len(accepted_at(double)) >= count, timeout):
        raise RuntimeError(f"only {len(accepted_at(double))} of {count} messages arrived within {timeout} s")


def link_chats(double: TelegramDouble, publish: Publisher) -> None:
    tokens = {}
    for chat in range(1, CHATS + 1):
        tokens[chat] = secrets.token_urlsafe(32)
        expires_at = datetime.now(UTC) + timedelta(minutes=10)
        publish(
            TelegramLinkRequested(
                account_id=f"{chat:032x}", token_hash=telegram_token_hash(tokens[chat]), expires_at=expires_at
            )
        )
    time.sleep(1.0)
    for chat, token in tokens.items():
        double.api.user_says(chat, f"/start {token}")
    linked = {chat for chat in tokens}
    if not double.api.wait_for(lambda: {m.chat_id for m in double.api.messages()} >= linked, 60):
        raise RuntimeError("the chats were not all linked")
    time.sleep(1.5)  # every chat's next message may leave at once


async def floor_ms(amqp_uri: str, double: TelegramDouble, samples: int = 200) -> dict:
    """A bare AMQP publish -> consume, and a bare sendMessage to the double: p50 of each, in ms."""
    connection = await aio_pika.connect(amqp_uri)
    try:
        channel = await connection.channel()
        queue = await channel.declare_queue(exclusive=True)
        amqp = []
        for _ in range(samples):
            started = time.perf_counter()
            await channel.default_exchange.publish(aio_pika.Message(b"{}"), routing_key=queue.name)
            while await queue.get(no_ack=True, fail=False) is None:
                await asyncio.sleep(0)
            amqp.append(time.perf_counter() - started)
    finally:
        await connection.close()
    double.api.user_says(999_999, "hello")
    http = []
    async with httpx.AsyncClient(base_url=f"{double.url}/bot{double.token}") as client:
        for n in range(samples):
            started = time.perf_counter()
            (await client.post("/sendMessage", data={"chat_id": 999_999, "text": f"floor {n}"})).raise_for_status()
            http.append(time.perf_counter() - started)
    return {"amqp": percentiles(amqp)["p50_ms"], "http": percentiles(http)["p50_ms"]}


def idle_latency(double: TelegramDouble, publish: Publisher) -> dict:
    latencies = []
    for n in range(IDLE):
        chat = n % CHATS + 1
        event = order(chat, 9000 + n)
        published = publish(event)
        if not double.api.wait_for(lambda e=event: e.order_id in accepted_at(double), 10):
            raise RuntimeError("an idle event was not delivered")
        latencies.append(accepted_at(double)[event.order_id] - published)
    time.sleep(1.5)
    return percentiles(latencies)


def burst(double: TelegramDouble, publish: Publisher) -> dict:
    before = len(accepted_at(double))
    events = [order(chat, n) for n in range(BURST // CHATS) for chat in range(1, CHATS + 1)]
    published = {event.order_id: publish(event) for event in events}
    wait(double, before + BURST, timeout=BURST / LIMIT_PER_S * 3 + 60)
    accepted = {order_id: at for order_id, at in accepted_at(double).items() if order_id in published}
    latencies = [accepted[order_id] - published[order_id] for order_id in published]
    times = sorted(accepted.values())
    # The k-th message published cannot leave before k/30 s after the first, nor before it is published.
    first, schedule = min(published.values()), sorted(published.values())
    ideal = [max(0.0, first + k / LIMIT_PER_S - at) for k, at in enumerate(schedule)]
    return {
        **percentiles(latencies),
        "ideal": percentiles(ideal),
        "rate": (BURST - 1) / (times[-1] - times[0]),
        "publish_s": max(published.values()) - min(published.values()),
    }


def notify_bench(log_dir: Path) -> list[str]:
    with (
        temporary_vhost("kd_bench_notify") as amqp_uri,
        temporary_databases(("notify",), "kd_bench_notify") as databases,
        TelegramDouble() as double,
    ):
        floor = asyncio.run(floor_ms(amqp_uri, double))  # before the double enforces Telegram's limits
        limits = double.api.enforce_limits()
        env = {
            **os.environ,
            **double.settings(),
            "AMQP_URI": amqp_uri,
            "NOTIFY_DATABASE_URL": databases["notify"],
            "NOTIFY_METRICS_PORT": str(free_port()),
            "LOG_LEVEL": "WARNING",
        }
        notify = Process("notify", [str(BIN / "kernodeck-notify")], env, log_dir / "notify.log")
        notify.start()
        try:
            publish = Publisher(amqp_uri)
            deadline = time.monotonic() + 30
            while not metrics_show(env["NOTIFY_METRICS_PORT"], "kernodeck_notify_ready 1.0"):  # its queue is bound
                if time.monotonic() > deadline or not notify.running():
                    raise RuntimeError("notify did not start")
                time.sleep(0.1)
            link_chats(double, publish)
            idle = idle_latency(double, publish)
            loaded = burst(double, publish)
            fields = Path(f"/proc/{notify.popen.pid}/stat").read_text().split()
            notify.popen.send_signal(__import__("signal").SIGUSR1)
            time.sleep(3)
            print("DEBUG notify cpu s", (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK"))
        finally:
            notify.stop()
    floor_total = floor["amqp"] + floor["http"]
    return [
        f"notify idle (one event at a time, {IDLE}): p50 {idle['p50_ms']:.1f} ms  p99 {idle['p99_ms']:.1f} ms;"
        f" floor (bare AMQP publish->consume {floor['amqp']:.2f} ms + bare sendMessage {floor['http']:.2f} ms)"
        f" = {floor_total:.2f} ms: p50 {idle['p50_ms'] / floor_total:.1f}x the floor",
        f"notify burst ({BURST} events over {CHATS} chats, published in {loaded['publish_s']:.1f} s):"
        f" p50 {loaded['p50_ms'] / 1000:.2f} s  p99 {loaded['p99_ms'] / 1000:.2f} s;"
        f" the 30/s limit alone imposes p50 {loaded['ideal']['p50_ms'] / 1000:.2f} s  p99 {loaded['ideal']['p99_ms'] / 1000:.2f} s",
        f"notify sustained rate: {loaded['rate']:.1f} messages/s = {loaded['rate'] / LIMIT_PER_S:.2f} of Telegram's"
        f" {LIMIT_PER_S}/s; limit violations seen by the Bot API double: {limits.violations}",
    ]


def main() -> None:
    with tempfile.TemporaryDirectory() as logs:
        for line in notify_bench(Path(logs)):
            print(line, flush=True)


if __name__ == "__main__":
    main()
