"""`kernodeck-admin dead-letters list|replay|drop SERVICE [ID...]`: an operator's hands on a service's dead letters."""

import argparse
import json
import os
import sys
from dataclasses import asdict

from kernodeck_kit import dead_letters

DEFAULT_AMQP_URI = "amqp://guest:guest@127.0.0.1:5672/"


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(prog="kernodeck-admin dead-letters", description=__doc__)
    cli.add_argument(
        "--amqp-uri",
        default=os.environ.get("OPERATOR_AMQP_URI") or os.environ.get("AMQP_URI", DEFAULT_AMQP_URI),
        help="default: $OPERATOR_AMQP_URI, else $AMQP_URI",
    )
    commands = cli.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="one JSON line per dead letter, oldest first; none is removed")
    listing.add_argument("service")
    listing.add_argument("--limit", type=int, default=1000)
    for name, what in (("replay", "send back to the queue it failed in"), ("drop", "remove for good")):
        command = commands.add_parser(name, help=f"{what} the dead letters named, or all with --all")
        command.add_argument("service")
        command.add_argument("ids", nargs="*", help="ids as `list` shows them")
        command.add_argument("--all", action="store_true")
    return cli


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "list":
        for letter in dead_letters.peek(args.amqp_uri, args.service, args.limit):
            print(json.dumps(asdict(letter)))
        return 0
    if bool(args.ids) == args.all:
        print("name the dead letters' ids, or pass --all", file=sys.stderr)
        return 2
    act = dead_letters.replay if args.command == "replay" else dead_letters.drop
    done = act(args.amqp_uri, args.service, None if args.all else set(args.ids))
    missing = set(args.ids) - set(done)
    print(json.dumps({args.command: done, "not_found": sorted(missing)}))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
