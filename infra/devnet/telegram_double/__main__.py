"""`python -m infra.devnet.telegram_double`: a Bot API for one bot, until Ctrl-C or SIGTERM."""

import argparse
import signal
import threading

from . import TelegramDouble


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.devnet.telegram_double", description=__doc__)
    parser.add_argument("--port", type=int, default=8081, help="HTTP port (default: %(default)s)")
    parser.add_argument("--username", default="kernodeck_dev_bot", help="the bot's username (default: %(default)s)")
    args = parser.parse_args(argv)

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with TelegramDouble(port=args.port, username=args.username) as double:
        for key, value in double.settings().items():
            print(f"{key}={value}", flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
