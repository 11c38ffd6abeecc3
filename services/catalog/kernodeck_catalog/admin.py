"""`kernodeck-admin prices`: the lot prices the catalog quotes, and a check of a catalog file before a restart.

kernodeck-admin prices show          # each model's lot price per duration, as the running catalog quotes them
kernodeck-admin prices check FILE    # parse and check an edited catalog.toml; then point CATALOG_CONFIG_PATH at it
"""

import argparse
import sys
from pathlib import Path

from kernodeck_contracts.money import format_usd


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernodeck-admin prices", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("show", help="the lot prices the running catalog quotes")
    commands.add_parser("check", help="check an edited catalog file").add_argument("file", type=Path)
    args = parser.parse_args(argv)
    if args.command == "check":
        return check(args.file)
    return show()


def check(path: Path) -> int:
    from kernodeck_catalog.config import load_catalog_file

    try:
        catalog = load_catalog_file(path)
    except (OSError, ValueError, KeyError) as refused:  # tomllib's errors are ValueErrors
        print(f"refused: {path}: {refused}", file=sys.stderr)
        return 1
    print_prices(
        [
            {"id": m.id, "lot_prices_cents": {str(d): p for d, p in m.lot_prices_cents.items()}}
            for m in catalog.models.values()
        ]
    )
    print(
        f"{path}: {len(catalog.models)} models, {len(catalog.preparations)} preparations: restart the catalog with it"
    )
    return 0


def show() -> int:
    from kernodeck_kit import green

    green.patch()
    from nameko.standalone.rpc import ClusterRpcProxy

    from kernodeck_contracts.clients import CatalogClient
    from kernodeck_kit.settings import ServiceSettings
    from kernodeck_kit.transport.peers import on_cluster

    with ClusterRpcProxy(ServiceSettings(service_name="catalog-admin").nameko_config()) as cluster:
        print_prices(on_cluster(cluster, CatalogClient).list_catalog().model_dump()["models"])
    return 0


def print_prices(models: list[dict]) -> None:
    for model in models:
        prices = ", ".join(f"{days} days {format_usd(cents)} USD" for days, cents in model["lot_prices_cents"].items())
        print(f"{model['id']}: {prices} per lot")


if __name__ == "__main__":
    sys.exit(main())
