"""`kernodeck-admin accounts`: operator chores. The operator role is set here, never over RPC."""

import argparse
import sys

from kernodeck_accounts import store
from kernodeck_accounts.config import AccountsSettings
from kernodeck_accounts.domain import normalize_email
from kernodeck_kit import migrations
from kernodeck_kit.db import make_engine
from kernodeck_kit.outbox import Store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernodeck-admin accounts", description="Kernodeck accounts administration")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("grant-operator", help="give an account the operator role").add_argument("email")
    commands.add_parser("revoke-operator", help="take the operator role from an account").add_argument("email")
    args = parser.parse_args(argv)

    settings = AccountsSettings()
    url = settings.resolved_database_url()
    migrations.upgrade("kernodeck_accounts", url)
    engine = make_engine(url)
    try:
        with Store(engine, settings.service_name, relay=None).transaction() as tx:
            account = store.set_operator(tx.session, normalize_email(args.email), args.command == "grant-operator")
    finally:
        engine.dispose()

    if account is None:
        print(f"no account with email {args.email}", file=sys.stderr)
        return 1
    print(f"{args.command}: {account.email} (account {account.id}) is_operator={account.is_operator}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
