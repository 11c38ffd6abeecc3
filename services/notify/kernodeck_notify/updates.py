"""What chats type to the bot, by long polling getUpdates.

Telegram forgets an update once a getUpdates call asks for the ones after
it. Each update is answered (its answer queued, in one transaction) before
the next call, so one received just before a stop comes again at the next
start, and the update id recorded with its answer keeps it from being
answered twice. (python-telegram-bot's Updater moves past updates before its
handlers have run, which would lose them in a crash: this loop does not.)
"""

import asyncio
import logging
from collections.abc import Callable

from telegram import Bot, Update
from telegram.error import TelegramError

from kernodeck_kit.types import utcnow
from kernodeck_kit.units import Units
from kernodeck_notify.database import in_thread
from kernodeck_notify.domain.pacing import Pacer
from kernodeck_notify.use_cases import ChatMessage, NotifyUnit, apply_chat_message

log = logging.getLogger(__name__)


def chat_message(update: Update) -> ChatMessage | None:
    message = update.message
    if message is None:
        return None
    user = message.from_user
    return ChatMessage(update.update_id, message.chat.id, message.text, user.language_code if user else None)


async def poll(
    bot: Bot,
    units: Units[NotifyUnit],
    public_url: str,
    poll_timeout_s: int,
    backoff: Pacer,
    on_queued: Callable[[], None],
) -> None:
    """Answer the chats until cancelled."""
    offset, failures = None, 0
    while True:
        try:
            updates = await bot.get_updates(offset=offset, timeout=poll_timeout_s, allowed_updates=["message"])
        except TelegramError as error:
            failures += 1
            log.warning("getUpdates failed", extra={"error": f"{type(error).__name__}: {error.message}"})
            await asyncio.sleep(backoff.backoff(failures))
            continue
        failures = 0
        for update in updates:
            message = chat_message(update)
            if message is not None:
                queued = await in_thread(apply_chat_message, units, message, bot.username, public_url, utcnow())
                if queued:
                    on_queued()
            offset = update.update_id + 1
