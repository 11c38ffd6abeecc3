"""`kernodeck-admin nodes`: operators manage GPU nodes (the same RPCs as the admin routes).

kernodeck-admin nodes add-node --host 10.0.0.5 --port 22 --host-key "ssh-ed25519 AAAA..." --model h100 --gpus 8
kernodeck-admin nodes list-nodes
kernodeck-admin nodes check NODE_ID        # what it provides to keep rentals apart, checked again now
kernodeck-admin nodes drain NODE_ID        # no new rentals; live ones run to their end
kernodeck-admin nodes maintain NODE_ID     # out of service (live rentals are not cut)
kernodeck-admin nodes enable NODE_ID       # back in service
kernodeck-admin nodes retire NODE_ID       # refused while a rental is live: drain first
"""

import argparse
import sys

CHECK_TIMEOUT_S = 60.0  # a node's check: an SSH connection and a script that only reads


def main(argv: list[str] | None = None) -> int:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_kit.operators import CommandRpcProxy
    from kernodeck_kit.settings import ServiceSettings
    from kernodeck_kit.transport.calls import call_service, print_call

    parser = argparse.ArgumentParser(prog="kernodeck-admin nodes", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    add = commands.add_parser("add-node", help="register a GPU node (its SSH host key is pinned)")
    add.add_argument("--host", required=True)
    add.add_argument("--port", type=int, default=22)
    add.add_argument("--host-key", required=True, help="the node's public host key, `type base64`")
    add.add_argument("--model", required=True, help="a catalog model id, e.g. h100")
    add.add_argument("--gpus", type=int, required=True)
    add.add_argument("--note", default="")
    commands.add_parser("list-nodes", help="every node with its state, GPUs in use and isolation")
    check = commands.add_parser("check", help="check again what a node provides to keep rentals apart")
    check.add_argument("node_id")
    for command, state in (
        ("drain", "draining"),
        ("maintain", "maintenance"),
        ("enable", "available"),
        ("retire", "retired"),
    ):
        sub = commands.add_parser(command, help=f"set a node {state}")
        sub.add_argument("node_id")
        sub.add_argument("--note", default="")
        sub.set_defaults(state=state)
    args = parser.parse_args(argv)

    config = ServiceSettings(service_name="provisioning-admin").nameko_config()
    with CommandRpcProxy(config) as cluster:
        provisioning = cluster.provisioning
        if args.command == "add-node":

            def add_and_check() -> dict:  # printed checked: its isolation, or why it could not be checked
                node = (args.host, args.port, args.host_key, args.model, args.gpus, args.note)
                added = call_service(provisioning.add_node, *node, timeout=CHECK_TIMEOUT_S)
                return call_service(provisioning.check_node, added["id"], timeout=CHECK_TIMEOUT_S)

            return print_call(add_and_check, timeout=2 * CHECK_TIMEOUT_S)
        if args.command == "check":
            call = (provisioning.check_node, args.node_id)
        elif args.command == "list-nodes":
            call = (provisioning.list_nodes,)
        else:
            call = (provisioning.set_node_state, args.node_id, args.state, args.note)
        return print_call(*call, timeout=CHECK_TIMEOUT_S)


if __name__ == "__main__":
    sys.exit(main())
