"""`make run`: the whole system on this machine, until Ctrl-C.

Reads .env if present (see .env.example), makes sure the broker answers,
then starts every service and the gateway; each service migrates its own
database as it starts (SQLite files under DATA_DIR unless *_DATABASE_URL
points elsewhere).
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from infra.local.dev_payments import dev_payments_env, keep_dev_rates_fresh
from infra.local.stack import ROOT, Stack


def load_dotenv(path: Path) -> None:
    if not path.exists():
        return
    for line in path.read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#"):
            os.environ.setdefault(key.strip(), value.strip())


def broker_answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def ensure_broker(amqp_uri: str) -> None:
    parsed = urlparse(amqp_uri)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 5672
    if broker_answers(host, port):
        return
    if host not in ("127.0.0.1", "localhost") or shutil.which("rabbitmq-server") is None:
        sys.exit(f"RabbitMQ does not answer at {host}:{port}. Start it, or set AMQP_URI in .env.")
    print("RabbitMQ is stopped: starting the local rabbitmq-server ...", flush=True)
    subprocess.run(["rabbitmq-server", "-detached"], check=False)
    deadline = time.monotonic() + 60
    while not broker_answers(host, port):
        if time.monotonic() > deadline:
            sys.exit("rabbitmq-server did not start within 60 s; see its logs under /var/log/rabbitmq.")
        time.sleep(1)


def main() -> None:
    load_dotenv(ROOT / ".env")
    os.environ.setdefault("DATA_DIR", str(ROOT / "var" / "data"))
    ensure_broker(os.environ.get("AMQP_URI", "amqp://guest:guest@127.0.0.1:5672/"))
    env = {}
    if not any(key.startswith("PAYMENTS_") for key in os.environ):
        rates_file = ROOT / "var" / "dev-rates.json"
        keep_dev_rates_fresh(rates_file)
        env = dev_payments_env(rates_file)
        print("payments: regtest chains, public test keys, development rates (set PAYMENTS_* to change)", flush=True)
    stack = Stack(env=env, gateway_port=int(os.environ.get("GATEWAY_PORT", "8000")))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        stack.start()
        print(
            f"\nKernodeck is running: {stack.url}  (API docs: {stack.url}/api/v1/docs). Ctrl-C stops it.\n", flush=True
        )
        while all(p.running() for p in stack.processes.values()):
            time.sleep(0.5)
        print("a process stopped; stopping the others", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
