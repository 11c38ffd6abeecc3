"""`kernodeck-payments-admin`: operator commands that never go through the API.

kernodeck-payments-admin import-solana-addresses FILE   # one address per line, generated offline
kernodeck-payments-admin solana-pool                    # how many unused addresses remain
"""

import argparse
import sys
from pathlib import Path

from sqlmodel import Session

from kernodeck_chains.addresses import is_valid_solana_address
from kernodeck_kit import migrations
from kernodeck_kit.db import make_engine
from kernodeck_kit.types import utcnow
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.store.addresses import import_solana_addresses, solana_pool_left


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernodeck-payments-admin", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    importing = commands.add_parser("import-solana-addresses", help="add offline-generated Solana deposit addresses")
    importing.add_argument("file", type=Path)
    commands.add_parser("solana-pool", help="count the unused Solana deposit addresses")
    args = parser.parse_args(argv)

    url = PaymentsSettings().resolved_database_url()
    migrations.upgrade("kernodeck_payments", url)
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            if args.command == "import-solana-addresses":
                lines = [line.strip() for line in args.file.read_text().splitlines() if line.strip()]
                invalid = [line for line in lines if not is_valid_solana_address(line)]
                if invalid:
                    print(f"refused: {len(invalid)} invalid Solana addresses, first: {invalid[0]}", file=sys.stderr)
                    return 1
                added = import_solana_addresses(session, lines, utcnow())
                session.commit()
                print(f"imported {added} new addresses ({len(lines) - added} already known)")
            print(f"unused Solana addresses: {solana_pool_left(session)}")
    finally:
        engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
