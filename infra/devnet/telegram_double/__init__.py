"""A local server that speaks the Telegram Bot API over HTTP, for tests and `make run` (see README.md)."""

import secrets

from infra.devnet.served import ServedDouble

from .bot_api import BotApi, Limits, Sent
from .server import Handler

__all__ = ["Limits", "Sent", "TelegramDouble"]


class TelegramDouble(ServedDouble):
    """The Bot API of one bot at `url` (`api` holds its state and the faults to inject).

    Point python-telegram-bot at it with `base_url=f"{double.url}/bot"` and the double's `token`.
    """

    handler = Handler

    def __init__(self, *, port: int = 0, username: str = "kernodeck_dev_bot", token: str | None = None):
        super().__init__(port=port, block_interval_s=None)
        self.api = BotApi(token or f"7000000001:{secrets.token_urlsafe(27)}", username)

    @property
    def token(self) -> str:
        return self.api.token

    @property
    def username(self) -> str:
        return self.api.username

    def settings(self) -> dict[str, str]:
        """What notify and accounts need to use this bot."""
        return {
            "NOTIFY_BOT_TOKEN": self.token,
            "NOTIFY_TELEGRAM_API_URL": self.url,
            "ACCOUNTS_TELEGRAM_BOT_USERNAME": self.username,
        }

    def app(self) -> BotApi:
        return self.api

    def produce_block(self) -> None:
        """A bot API has no blocks (block_interval_s is None, so this is never called)."""

    def stop_serving(self) -> None:
        """Unreachable: new connections refused, those kept alive dropped, long polls held open ended."""
        self.api.unreachable = True
        self.api.set_down(True)
        super().stop_serving()
        self.api.set_down(False)

    def serve(self) -> "TelegramDouble":
        self.api.unreachable = False
        return super().serve()
