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

    from kernodeck_contracts.clients import ProvisioningClient
    from kernodeck_kit.operators import CommandRpcProxy
    from kernodeck_kit.settings import ServiceSettings
    from kernodeck_kit.transport.calls import print_answer
    from kernodeck_kit.transport.peers import on_cluster

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
        provisioning = on_cluster(cluster, ProvisioningClient, timeout=CHECK_TIMEOUT_S)
        if args.command == "add-node":

            def add_and_check() -> dict:  # printed checked: its isolation, or why it could not be checked
                added = provisioning.add_node(
                    host=args.host,
                    port=args.port,
                    host_key=args.host_key,
                    model=args.model,
                    gpu_count=args.gpus,
                    note=args.note,
                )
                return provisioning.check_node(node_id=added["id"])

            return print_answer(add_and_check)
        if args.command == "check":
            return print_answer(lambda: provisioning.check_node(node_id=args.node_id))
        if args.command == "list-nodes":
            return print_answer(provisioning.list_nodes)
        return print_answer(lambda: provisioning.set_node_state(node_id=args.node_id, state=args.state, note=args.note))


if __name__ == "__main__":
    sys.exit(main())
