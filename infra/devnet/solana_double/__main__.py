"""`python -m infra.devnet.solana_double`: serve the Solana double until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import signal
import threading

from .server import SolanaDouble
from .traffic import Traffic


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m infra.devnet.solana_double", description=__doc__)
    parser.add_argument("--port", type=int, default=8899, help="solana-test-validator's RPC port by default")
    parser.add_argument("--block-time-ms", type=int, default=400, help="one block this often (a slot on mainnet)")
    parser.add_argument(
        "--mainnet-size",
        action="store_true",
        help=f"every block of mainnet size: {Traffic.votes} vote transactions and {Traffic.swaps} swaps besides its own",
    )
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    traffic = Traffic() if args.mainnet_size else None
    with SolanaDouble(port=args.port, block_time_ms=args.block_time_ms, traffic=traffic) as node:
        print(f"SOLANA_RPC_URL={node.url}", flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
