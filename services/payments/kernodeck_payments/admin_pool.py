"""The operator's Solana address pool, straight in payments' database (`kernodeck-admin payments`)."""

import sys
from pathlib import Path

from sqlmodel import Session

from kernodeck_chains.addresses import is_valid_solana_address
from kernodeck_kit import migrations
from kernodeck_kit.db import make_engine
from kernodeck_kit.types import utcnow
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.store.addresses import import_solana_addresses, solana_pool_left


def run_pool_command(settings: PaymentsSettings, command: str, file: Path | None) -> int:
    url = settings.resolved_database_url()
    migrations.upgrade("kernodeck_payments", url)
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            if command == "import-solana-addresses":
                lines = [line.strip() for line in file.read_text().splitlines() if line.strip()]
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
