"""`kernodeck-admin AREA COMMAND ...`: every operator task from one command. Each area is its service's own
admin module (its own settings, the same RPCs as the admin routes, or its database for what the API never does).

kernodeck-admin AREA --help      # an area's commands
"""

import importlib
import sys

AREAS = {
    "accounts": ("kernodeck_accounts.admin", "the operator role: grant-operator, revoke-operator EMAIL"),
    "nodes": ("kernodeck_provisioning.admin", "GPU nodes: add-node, list-nodes, drain, maintain, enable, retire"),
    "prices": ("kernodeck_catalog.admin", "lot prices: show, check an edited catalog file"),
    "payments": (
        "kernodeck_payments.admin",
        "methods on or off, the review queue, set-rate, check-xpubs, the Solana address pool",
    ),
    "support": ("kernodeck_support.admin", "support requests: list, show, answer; extensions: confirm, refuse"),
    "dead-letters": ("kernodeck_kit.dead_letters_cli", "events set aside: list, replay, drop SERVICE"),
    "broker": ("kernodeck_kit.bus_users", "the bus's users and permissions: apply, show"),
}


def usage() -> str:
    width = max(map(len, AREAS))
    lines = [f"  {area:<{width}}  {text}" for area, (_, text) in AREAS.items()]
    return "usage: kernodeck-admin AREA COMMAND ...\n\nareas:\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] not in AREAS:
        print(f"kernodeck-admin: no area {argv[0]!r}\n{usage()}", file=sys.stderr)
        return 2
    module, _ = AREAS[argv[0]]
    return importlib.import_module(module).main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
