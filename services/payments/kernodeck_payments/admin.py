"""`kernodeck-admin payments`: payment methods, the review queue, the rates file, deposit keys and the Solana pool.

kernodeck-admin payments methods                          # each method: available, or why not
kernodeck-admin payments disable ASSET NETWORK            # switch a method off (enable: back on)
kernodeck-admin payments reviews [--status open|resolved] [--limit N] [--cursor C]  (one page: {items, next_cursor})
kernodeck-admin payments resolve ID credit_to_balance --amount-cents 9500 | refunded_off_system|dismissed --note ...
kernodeck-admin payments set-rate SYMBOL USD              # write the operator's rates file (PAYMENTS_RATE_FILE)
kernodeck-admin payments check-xpubs [--count 5] [--expect NETWORK INDEX ADDRESS]...
kernodeck-admin payments import-solana-addresses FILE     # one address per line, generated offline
kernodeck-admin payments solana-pool                      # how many unused addresses remain
"""

import argparse
import getpass
import sys
from pathlib import Path

from kernodeck_payments.config import PaymentsSettings

DATABASE_COMMANDS = ("import-solana-addresses", "solana-pool")
RPC_COMMANDS = ("methods", "enable", "disable", "reviews", "resolve")


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(prog="kernodeck-admin payments", description=__doc__.splitlines()[0])
    cli.add_argument("--as", dest="operator", default=f"cli:{getpass.getuser()}", help="who decides (kept with it)")
    commands = cli.add_subparsers(dest="command", required=True)
    commands.add_parser("methods", help="each payment method: available, or the reason it is not")
    for name in ("enable", "disable"):
        switch = commands.add_parser(name, help=f"{name} a payment method")
        switch.add_argument("asset")
        switch.add_argument("network")
    reviews = commands.add_parser("reviews", help="the operator review queue")
    reviews.add_argument("--status", choices=("open", "resolved"), default="open")
    reviews.add_argument("--limit", type=int, default=None, help="items per page, 1 to 200 (50)")
    reviews.add_argument("--cursor", default=None, help="the previous page's next_cursor")
    resolve = commands.add_parser("resolve", help="decide a review item")
    resolve.add_argument("review_id")
    resolve.add_argument("decision", choices=("credit_to_balance", "refunded_off_system", "dismissed"))
    resolve.add_argument("--amount-cents", type=int, default=None, help="with credit_to_balance")
    resolve.add_argument("--note", default="")
    rate = commands.add_parser("set-rate", help="set a symbol's USD rate in the operator's rates file, as of now")
    rate.add_argument("symbol")
    rate.add_argument("usd", help="a decimal, e.g. 64000.00")
    keys = commands.add_parser("check-xpubs", help="the addresses the configured account keys derive first")
    keys.add_argument("--count", type=int, default=5)
    keys.add_argument("--expect", nargs=3, action="append", default=[], metavar=("NETWORK", "INDEX", "ADDRESS"))
    commands.add_parser("import-solana-addresses", help="add offline-generated Solana addresses").add_argument(
        "file", type=Path
    )
    commands.add_parser("solana-pool", help="count the unused Solana deposit addresses")
    return cli


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    settings = PaymentsSettings()
    if args.command in DATABASE_COMMANDS:
        from kernodeck_payments.admin_pool import run_pool_command

        return run_pool_command(settings, args.command, getattr(args, "file", None))
    if args.command in RPC_COMMANDS:
        return rpc_command(args)
    if args.command == "set-rate":
        from kernodeck_payments.admin_rates import set_rate

        return set_rate(settings.rate_file, args.symbol, args.usd)
    from kernodeck_payments.admin_keys import check_xpubs

    return check_xpubs(settings, args.count, args.expect)


def rpc_command(args) -> int:
    from kernodeck_kit import green

    green.patch()
    from kernodeck_contracts.clients import PaymentsClient
    from kernodeck_kit.operators import CommandRpcProxy
    from kernodeck_kit.settings import ServiceSettings
    from kernodeck_kit.transport.calls import print_answer
    from kernodeck_kit.transport.peers import on_cluster

    with CommandRpcProxy(ServiceSettings(service_name="payments-admin").nameko_config()) as cluster:
        payments = on_cluster(cluster, PaymentsClient)
        calls = {
            "methods": payments.list_methods,
            "enable": lambda: payments.set_method_enabled(
                operator_id=args.operator, asset=args.asset, network=args.network, enabled=True
            ),
            "disable": lambda: payments.set_method_enabled(
                operator_id=args.operator, asset=args.asset, network=args.network, enabled=False
            ),
            "reviews": lambda: payments.list_reviews(status=args.status, limit=args.limit, cursor=args.cursor),
            "resolve": lambda: payments.resolve_review(
                operator_id=args.operator,
                review_id=args.review_id,
                decision=args.decision,
                amount_usd_cents=args.amount_cents,
                note=args.note,
            ),
        }
        return print_answer(calls[args.command])


if __name__ == "__main__":
    sys.exit(main())
