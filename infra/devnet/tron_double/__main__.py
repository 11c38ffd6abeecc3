"""`python -m infra.devnet.tron_double`: the double with a USDT-like token, until Ctrl-C or SIGTERM."""

import argparse
import signal
import threading

from . import TronDouble


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m infra.devnet.tron_double", description=__doc__)
    parser.add_argument("--port", type=int, default=8090, help="HTTP port (java-tron's default: %(default)s)")
    parser.add_argument("--solidify-after", type=int, default=19, help="blocks on top that solidify a block")
    parser.add_argument("--block-time", type=float, default=3.0, help="seconds between blocks; 0: only on request")
    args = parser.parse_args(argv)

    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with TronDouble(
        solidify_after=args.solidify_after, block_interval_s=args.block_time or None, port=args.port
    ) as double:
        usdt = double.deploy_trc20("USDT", 6, 10**15)
        print(f"TRON_HTTP_URL={double.url}", flush=True)
        print(f"TRON_USDT_CONTRACT={usdt}", flush=True)
        print(f"TRON_DEV_ADDRESS={double.accounts[0]}", flush=True)
        print(f"TRON_DEV_PRIVATE_KEY={double.private_keys[0].removeprefix('0x')}", flush=True)
        stop.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
