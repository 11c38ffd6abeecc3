"""`kernodeck-watcher --network NAME`: run the chain watcher of one network."""

import argparse
from typing import get_args


def main(argv: list[str] | None = None) -> None:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_kit.transport import runner
    from kernodeck_watchers.config import Network, WatcherSettings
    from kernodeck_watchers.service import watcher_service

    parser = argparse.ArgumentParser(prog="kernodeck-watcher", description="Run the chain watcher of one network.")
    parser.add_argument("--network", required=True, choices=get_args(Network))
    network = parser.parse_args(argv).network
    runner.run(watcher_service(network), WatcherSettings(network=network), "kernodeck_watchers")


if __name__ == "__main__":
    main()
