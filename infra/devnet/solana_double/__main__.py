"""`python -m infra.devnet.solana_double`: serve the Solana double until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import signal
import threading

from .server import SolanaDouble


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m infra.devnet.solana_double", description=__doc__)
    parser.add_argument("--port", type=int, default=8899, help="solana-test-validator's RPC port by default")
    parser.add_argument("--block-time-ms", type=int, default=400, help="one block this often (a slot on mainnet)")
    args = parser.parse_args(argv)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with SolanaDouble(port=args.port, block_time_ms=args.block_time_ms) as node:
        print(f"SOLANA_RPC_URL={node.url}", flush=True)
        stop.wait()


if __name__ == "__main__":
    main()
