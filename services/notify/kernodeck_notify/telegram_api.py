"""The Bot API through python-telegram-bot: the bot, and what became of one sendMessage."""

import warnings
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from telegram import Bot, LinkPreviewOptions
from telegram.error import BadRequest, ChatMigrated, Forbidden, RetryAfter, TelegramError
from telegram.request import HTTPXRequest

from kernodeck_notify.config import NotifySettings


def make_bot(settings: NotifySettings) -> Bot:
    """The bot at `NOTIFY_TELEGRAM_API_URL` (api.telegram.org, or a local server speaking its API)."""
    timeout = settings.request_timeout_s
    return Bot(
        settings.token(),
        base_url=f"{settings.telegram_api_url}/bot",
        base_file_url=f"{settings.telegram_api_url}/file/bot",
        request=HTTPXRequest(
            connection_pool_size=2 * settings.max_per_second,
            read_timeout=timeout,
            write_timeout=timeout,
            connect_timeout=timeout,
            pool_timeout=timeout,
        ),
        # getUpdates waits up to poll_timeout_s for news on a connection of its own.
        get_updates_request=HTTPXRequest(
            connection_pool_size=1,
            read_timeout=timeout,
            write_timeout=timeout,
            connect_timeout=timeout,
            pool_timeout=timeout,
        ),
    )


class Result(StrEnum):
    SENT = "sent"
    RATE_LIMITED = "rate_limited"  # 429: wait `retry_after`, then again
    UNAVAILABLE = "unavailable"  # no answer, 5xx, a refused token: again after a back-off
    BLOCKED = "blocked"  # 403: the chat blocked the bot (or never started it)
    REFUSED = "refused"  # 400: Telegram will never take this message
    MIGRATED = "migrated"  # the group lives on under `new_chat_id`


@dataclass(frozen=True)
class Outcome:
    result: Result
    message_id: int | None = None
    retry_after_s: float = 0.0
    new_chat_id: int | None = None
    error: str = ""


async def send(bot: Bot, chat_id: int, text: str) -> Outcome:
    try:
        message = await bot.send_message(chat_id, text, link_preview_options=LinkPreviewOptions(is_disabled=True))
    except RetryAfter as error:
        return Outcome(Result.RATE_LIMITED, retry_after_s=_seconds(error), error=str(error))
    except Forbidden as error:
        return Outcome(Result.BLOCKED, error=error.message)
    except ChatMigrated as error:
        return Outcome(Result.MIGRATED, new_chat_id=error.new_chat_id, error=str(error))
    except BadRequest as error:
        return Outcome(Result.REFUSED, error=error.message)
    except TelegramError as error:  # NetworkError, TimedOut, InvalidToken...
        return Outcome(Result.UNAVAILABLE, error=f"{type(error).__name__}: {error.message}")
    return Outcome(Result.SENT, message_id=message.message_id)


def _seconds(error: RetryAfter) -> float:
    with warnings.catch_warnings():  # an int until PTB_TIMEDELTA becomes the default
        warnings.simplefilter("ignore")
        value = error.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)
