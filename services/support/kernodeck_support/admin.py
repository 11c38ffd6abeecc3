"""`kernodeck-admin support`: operators work the support queue (the same RPCs as the admin routes).

kernodeck-admin support list [--status open|answered]   # the queue, oldest first
kernodeck-admin support show REQUEST_ID
kernodeck-admin support answer REQUEST_ID "the answer"
kernodeck-admin support confirm REQUEST_ID [--note "..."]   # an extension: priced from the catalog, payable
kernodeck-admin support confirm-configuration REQUEST_ID --model h200 --lots 2 --days 7 [--note "..."]
                                                             # a change of configuration: a new order, priced
kernodeck-admin support refuse REQUEST_ID "the reason"      # an extension, refused with the reason as answer
"""

import argparse
import sys

OPERATOR = "operator-command"  # the author of answers given from this command


def main(argv: list[str] | None = None) -> int:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_contracts.clients import SupportClient
    from kernodeck_kit.operators import CommandRpcProxy
    from kernodeck_kit.settings import ServiceSettings
    from kernodeck_kit.transport.calls import print_answer
    from kernodeck_kit.transport.peers import on_cluster

    parser = argparse.ArgumentParser(prog="kernodeck-admin support", description=__doc__.splitlines()[0])
    parser.add_argument("--as", dest="author", default=OPERATOR, help="who answers (recorded with the answer)")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="requests in a status, oldest first")
    listing.add_argument("--status", default="open", choices=("open", "answered"))
    listing.add_argument("--limit", type=int, default=50)
    commands.add_parser("show", help="one request with its answers").add_argument("request_id")
    for command, text in (("answer", "text"), ("refuse", "reason")):
        sub = commands.add_parser(command, help=f"{command} a request")
        sub.add_argument("request_id")
        sub.add_argument(text)
    confirm = commands.add_parser("confirm", help="confirm an extension request")
    confirm.add_argument("request_id")
    confirm.add_argument("--note", default=None)
    change = commands.add_parser("confirm-configuration", help="confirm a change of configuration as a new order")
    change.add_argument("request_id")
    change.add_argument("--model", required=True)
    change.add_argument("--lots", type=int, required=True)
    change.add_argument("--days", type=int, required=True, choices=(3, 7, 30))
    change.add_argument("--note", default=None)
    args = parser.parse_args(argv)

    config = ServiceSettings(service_name="support-admin").nameko_config()
    with CommandRpcProxy(config) as cluster:
        support = on_cluster(cluster, SupportClient)
        calls = {
            "list": lambda: support.list_queue(status=args.status, limit=args.limit),
            "show": lambda: support.get_request(request_id=args.request_id),
            "answer": lambda: support.answer_request(
                operator_id=args.author, request_id=args.request_id, text=args.text
            ),
            "confirm": lambda: support.confirm_extension(
                operator_id=args.author, request_id=args.request_id, note=args.note
            ),
            "confirm-configuration": lambda: support.confirm_configuration(
                operator_id=args.author,
                request_id=args.request_id,
                model=args.model,
                lots=args.lots,
                duration_days=args.days,
                note=args.note,
            ),
            "refuse": lambda: support.refuse_extension(
                operator_id=args.author, request_id=args.request_id, reason=args.reason
            ),
        }
        return print_answer(calls[args.command])


if __name__ == "__main__":
    sys.exit(main())
