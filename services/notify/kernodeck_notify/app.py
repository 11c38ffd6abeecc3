"""The notify process: events in, chats' commands in, messages out, on one asyncio loop."""

import asyncio
import contextlib
import logging
from datetime import timedelta

import aio_pika
from aiormq.exceptions import AMQPError
from telegram import Bot
from telegram.error import TelegramError

from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store
from kernodeck_kit.types import utcnow
from kernodeck_kit.units import SqlUnits
from kernodeck_notify import metrics, use_cases
from kernodeck_notify.config import NotifySettings
from kernodeck_notify.database import in_thread
from kernodeck_notify.domain.pacing import Pacer
from kernodeck_notify.events import PREFETCH, bind, consume
from kernodeck_notify.sender import Sender
from kernodeck_notify.store import SqlNotify
from kernodeck_notify.telegram_api import make_bot
from kernodeck_notify.updates import poll
from kernodeck_notify.use_cases import NotifyUnit

log = logging.getLogger(__name__)

PRUNE_EVERY_S = 3600
TOKENS_KEPT_AFTER_EXPIRY = timedelta(days=1)


async def run(settings: NotifySettings, database_url: str, stop: asyncio.Event) -> None:
    """Run until `stop` is set (or a part fails, which raises)."""
    engine = make_engine(database_url)
    db = Store(engine, settings.service_name, relay=None)
    units = SqlUnits(db, SqlNotify)
    pacer = Pacer(
        settings.max_per_second,
        settings.chat_interval_s,
        settings.group_interval_s,
        settings.retry_first_s,
        settings.retry_max_s,
    )
    bot = make_bot(settings)
    sender = Sender(units, bot, pacer)
    connection = await _connect(settings.amqp_uri, pacer, stop)
    tasks: list[asyncio.Task] = []
    try:
        if connection is None:
            return
        channel = await connection.channel()
        await channel.set_qos(prefetch_count=PREFETCH)
        queue = await bind(channel)
        tasks.append(asyncio.create_task(consume(queue, units, settings.public_url, sender.wake), name="events"))
        tasks.append(asyncio.create_task(_run_bot(bot, units, settings, pacer, sender), name="bot"))
        tasks.append(asyncio.create_task(_prune(db, units, settings), name="prune"))
        stopping = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait([stopping, *tasks], return_when=asyncio.FIRST_COMPLETED)
        for task in done - {stopping}:
            if task.exception() is not None:
                raise task.exception()
    finally:
        metrics.READY.set(0)
        for task in tasks:  # the bot's sender waits a little for the requests that are out
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if connection is not None:
            await connection.close()
        await bot.shutdown()
        engine.dispose()


async def _connect(amqp_uri: str, pacer: Pacer, stop: asyncio.Event):
    """The broker, waited for (with back-off) until it answers or the process is told to stop."""
    failures = 0
    while not stop.is_set():
        try:
            return await aio_pika.connect_robust(amqp_uri, client_properties={"connection_name": "notify"})
        except (AMQPError, OSError) as error:
            failures += 1
            log.warning("the broker does not answer yet", extra={"error": type(error).__name__})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), pacer.backoff(failures))
    return None


async def _run_bot(
    bot: Bot, units: SqlUnits[NotifyUnit], settings: NotifySettings, pacer: Pacer, sender: Sender
) -> None:
    """Wait for the Bot API's getMe (events are queued meanwhile), then answer chats and send."""
    failures = 0
    while True:
        try:
            await bot.initialize()
            await bot.delete_webhook()  # Telegram refuses getUpdates to a bot with a webhook
            break
        except TelegramError as error:
            failures += 1
            log.warning(
                "the Bot API does not answer getMe yet", extra={"error": f"{type(error).__name__}: {error.message}"}
            )
            await asyncio.sleep(pacer.backoff(failures))
    log.info("bot ready", extra={"bot_username": bot.username})
    metrics.READY.set(1)
    polling = asyncio.create_task(poll(bot, units, settings.public_url, settings.poll_timeout_s, pacer, sender.wake))
    sending = asyncio.create_task(sender.run())
    try:
        done, _ = await asyncio.wait([polling, sending], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()  # a part that failed stops the process
    finally:
        # One at a time, each awaited to its end: the sender waits for the messages that are out,
        # so that their outcome is recorded before the process stops.
        for task in (polling, sending):
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def _prune(db: Store, units: SqlUnits[NotifyUnit], settings: NotifySettings) -> None:
    retention = timedelta(days=settings.delivery_retention_days)
    processed_retention = timedelta(days=settings.processed_events_retention_days)
    while True:
        now = utcnow()
        await in_thread(db.prune_processed, now - processed_retention)
        pruned = await in_thread(use_cases.prune, units, now, retention, TOKENS_KEPT_AFTER_EXPIRY)
        if pruned:
            log.info("delivery log pruned", extra={"removed": pruned})
        await asyncio.sleep(PRUNE_EVERY_S)
