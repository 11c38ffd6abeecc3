"""`kernodeck-notify`: run the notify process until SIGTERM or Ctrl-C."""

import asyncio
import logging
import signal

from kernodeck_kit import logs, metrics, migrations
from kernodeck_notify import app
from kernodeck_notify.config import NotifySettings

PACKAGE = "kernodeck_notify"


class _Scrubbed(logging.Formatter):
    """Another formatter's output with the bot token cut out (the Bot API's URLs carry it)."""

    def __init__(self, inner: logging.Formatter, secret: str):
        super().__init__()
        self.inner, self.secret = inner, secret

    def format(self, record: logging.LogRecord) -> str:
        return self.inner.format(record).replace(self.secret, "[redacted]")


def configure_logs(settings: NotifySettings, token: str) -> None:
    logs.configure(settings.service_name, settings.log_level)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(_Scrubbed(handler.formatter, token))
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request, URL (and token) included


async def _serve(settings: NotifySettings, database_url: str) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await app.run(settings, database_url, stop)


def main() -> None:
    settings = NotifySettings()
    token = settings.token()
    configure_logs(settings, token)
    database_url = settings.resolved_database_url()
    migrations.upgrade(PACKAGE, database_url)
    metrics.serve(settings.metrics_port, settings.metrics_host)
    logging.getLogger(__name__).info("notify started", extra={"metrics_port": settings.metrics_port})
    asyncio.run(_serve(settings, database_url))


if __name__ == "__main__":
    main()
