"""`python -m infra.testhosts.register_nodes`: what `kernodeck-admin nodes add-node` does (add, then check), for
every test host read from stdin as JSON, in one process: one per host cost a second of CPU each, mostly imports,
and every test stack registers seven. Prints {name: node, or null where it was known already} as JSON."""

import json
import sys

CHECK_TIMEOUT_S = 60.0  # as the command's: an SSH connection and a script that only reads


def main() -> int:
    from kernodeck_kit import green

    green.patch()

    from kernodeck_contracts.clients import ProvisioningClient
    from kernodeck_contracts.errors import ErrorCode, ServiceError
    from kernodeck_kit.operators import CommandRpcProxy
    from kernodeck_kit.settings import ServiceSettings
    from kernodeck_kit.transport.peers import on_cluster

    nodes = {}
    config = ServiceSettings(service_name="provisioning-admin").nameko_config()
    with CommandRpcProxy(config) as cluster:
        provisioning = on_cluster(cluster, ProvisioningClient, timeout=CHECK_TIMEOUT_S)
        for name, host in json.load(sys.stdin).items():
            try:
                added = provisioning.add_node(**host, note="local test host")
            except ServiceError as refused:
                if refused.code != ErrorCode.ALREADY_EXISTS:
                    print(f"{name}: refused ({refused.code}): {refused.detail}", file=sys.stderr)
                    return 1
                nodes[name] = None
                continue
            nodes[name] = provisioning.check_node(node_id=added["id"])
    print(json.dumps(nodes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
