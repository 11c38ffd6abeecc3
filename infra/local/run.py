"""`make run`: the whole system on this machine, until Ctrl-C.

Reads .env if present (see .env.example), makes sure the broker answers,
then starts every service and the gateway; each service migrates its own
database as it starts (SQLite files under DATA_DIR unless *_DATABASE_URL
points elsewhere). With KERNODECK_LOCAL_CHAINS on (the default) it also
installs and starts the local chain nodes (infra/devnet/install.sh,
infra/local/devnet.py) and one watcher per node, with development payments
settings under any PAYMENTS_* or WATCHER_* setting of your own, and writes
var/devnet.env for paying by hand; with it off, a watcher runs for each
network whose node URL is set. Without NOTIFY_BOT_TOKEN, notify talks to a
local Bot API double (infra/devnet/telegram_double): no real Telegram is
reached.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pydantic_settings import BaseSettings, SettingsConfigDict

from infra.devnet.telegram_double import TelegramDouble
from infra.local.dev_payments import dev_payments_env, keep_dev_rates_fresh
from infra.local.devnet import Devnet, configured_watchers
from infra.local.stack import ROOT, Stack
from infra.testhosts.local import local_hosts, provisioning_env, register

DEVNET_ENV = ROOT / "var" / "devnet.env"
TESTHOSTS = ROOT / "var" / "testhosts"


def read_dotenv(path: Path) -> dict[str, str]:
    """The KEY=VALUE lines of `path` (none if it is missing); comments aside."""
    if not path.exists():
        return {}
    pairs = (line.partition("=") for line in path.read_text().splitlines() if not line.lstrip().startswith("#"))
    return {key.strip(): value.strip() for key, sep, value in pairs if sep}


class RunSettings(BaseSettings):
    """`make run`'s own settings (KERNODECK_*)."""

    model_config = SettingsConfigDict(env_prefix="KERNODECK_", extra="ignore", env_ignore_empty=True)

    local_chains: bool = True
    # Each process logs into the local broker as its own user with its production permissions
    # (kernodeck_kit.bus_permissions), written through RabbitMQ's management API at this URL when it answers;
    # empty, or the API off: every process as AMQP_URI's user (guest).
    bus_users: str = "http://guest:guest@127.0.0.1:15672"


def local_settings(devnet_env: dict[str, str], environ: dict[str, str]) -> dict[str, str]:
    """The local chains' settings, less those you set yourself (a value of your own wins; an empty one does not)."""
    return {key: value for key, value in devnet_env.items() if not environ.get(key)}


def wants_test_hosts(environ: dict[str, str]) -> bool:
    """Local GPU test hosts unless provisioning is configured for real nodes (a key to log into them)."""
    return not environ.get("PROVISIONING_SSH_KEY_PATH")


def answers(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def ensure_broker(amqp_uri: str) -> None:
    parsed = urlparse(amqp_uri)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 5672
    if answers(host, port):
        return
    if host not in ("127.0.0.1", "localhost") or shutil.which("rabbitmq-server") is None:
        sys.exit(f"RabbitMQ does not answer at {host}:{port}. Start it, or set AMQP_URI in .env.")
    print("RabbitMQ is stopped: starting the local rabbitmq-server ...", flush=True)
    subprocess.run(["rabbitmq-server", "-detached"], check=False)
    deadline = time.monotonic() + 60
    while not answers(host, port):
        if time.monotonic() > deadline:
            sys.exit("rabbitmq-server did not start within 60 s; see its logs under /var/log/rabbitmq.")
        time.sleep(1)


def bus_users_url() -> str:
    """The management API to write the processes' broker users with, when it answers; else "" (as AMQP_URI)."""
    url = RunSettings().bus_users
    parsed = urlparse(url)
    if url and answers(parsed.hostname or "127.0.0.1", parsed.port or 15672):
        return url
    print("the broker's management API does not answer: every process uses AMQP_URI's user", flush=True)
    return ""


def stop_once(*_) -> None:
    """Ctrl-C or SIGTERM: stop, and let no second one (or the copy make or timeout passes on) cut the cleanup short."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def install_nodes() -> None:
    """infra/devnet/install.sh: idempotent, about a second once installed; a node it cannot install is skipped."""
    if subprocess.run([str(ROOT / "infra" / "devnet" / "install.sh")], check=False).returncode != 0:
        print("chains: some nodes could not be installed (see above); going on without them", flush=True)


def start_devnet() -> tuple[Devnet, dict[str, str]]:
    """Regtest nodes and doubles, development payments settings, the dev Solana pool imported."""
    install_nodes()
    rates_file = ROOT / "var" / "dev-rates.json"
    keep_dev_rates_fresh(rates_file)
    print("chains: starting the local nodes (infra/devnet) ...", flush=True)
    started = time.monotonic()
    devnet = Devnet(ROOT / "var" / "devnet", anvil_block_time=2)
    env = {**dev_payments_env(rates_file), **devnet.start(log=lambda line: print(f"  {line}", flush=True))}
    env = local_settings(env, os.environ)
    env = {**devnet.reset_watcher_databases(Path(os.environ["DATA_DIR"])), **env}
    if pool := devnet.import_solana_pool({**os.environ, **env}):
        print(f"  solana: {pool}", flush=True)
    print(f"chains: ready in {time.monotonic() - started:.1f} s", flush=True)
    print(
        "payments: regtest chains, public test keys, development rates, under your own PAYMENTS_* and WATCHER_*"
        " settings (KERNODECK_LOCAL_CHAINS=0 runs without the local chains: see .env.example)",
        flush=True,
    )
    return devnet, env


def start_telegram_double() -> tuple[TelegramDouble, dict[str, str]]:
    """A local Bot API for notify (no NOTIFY_BOT_TOKEN: no real bot); settings already given are kept."""
    double = TelegramDouble().start()
    settings = {key: value for key, value in double.settings().items() if not os.environ.get(key)}
    print(
        f"telegram: no NOTIFY_BOT_TOKEN, so notify talks to a local Bot API double at {double.url}"
        f" (bot @{double.username}). Play a chat: curl -s {double.url}/double/say -d chat_id=1 -d 'text=/start TOKEN'"
        f" (TOKEN: the end of the url from POST /api/v1/me/telegram-link); read what the bot sent:"
        f" curl -s '{double.url}/double/messages?chat_id=1'",
        flush=True,
    )
    return double, settings


def main() -> None:
    started = time.monotonic()
    for key, value in read_dotenv(ROOT / ".env").items():
        os.environ.setdefault(key, value)
    os.environ.setdefault("DATA_DIR", str(ROOT / "var" / "data"))
    # The local gateway speaks plain HTTP on a loopback address: its session cookie cannot be Secure there.
    os.environ.setdefault("GATEWAY_COOKIE_SECURE", "false")
    # Browsers and curl reach the local gateway directly, no proxy in front.
    os.environ.setdefault("GATEWAY_TRUSTED_PROXIES", "none")
    ensure_broker(os.environ.get("AMQP_URI", "amqp://guest:guest@127.0.0.1:5672/"))
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, stop_once)
    gateway_port = int(os.environ.get("GATEWAY_PORT", "8000"))
    if answers("127.0.0.1", gateway_port):
        sys.exit(f"port {gateway_port} is taken: is `make run` running already? (GATEWAY_PORT sets another)")
    devnet, env, watchers = None, {}, configured_watchers(os.environ)
    stack = telegram = None
    cleanup = ExitStack()
    try:
        if RunSettings().local_chains:
            devnet, env = start_devnet()
            watchers = devnet.up
        hosts = {}
        if wants_test_hosts(os.environ):
            subprocess.run([str(ROOT / "infra" / "testhosts" / "install.sh")], check=False)
            log = lambda line: print(line, flush=True)  # noqa: E731
            hosts = cleanup.enter_context(local_hosts(TESTHOSTS, log=log, fixed_addresses=True))
            env = {**env, **provisioning_env(TESTHOSTS)}
        if not os.environ.get("NOTIFY_BOT_TOKEN"):
            telegram, telegram_env = start_telegram_double()
            env = {**env, **telegram_env}
        stack = Stack(
            env=env, watchers=watchers, gateway_port=gateway_port, telegram=telegram, bus_users=bus_users_url()
        )
        stack.start(timeout=90)
        if hosts:
            register(hosts, stack.env)
            print(f"provisioning: the local GPU test hosts are its nodes ({', '.join(hosts)})", flush=True)
        ready_in = time.monotonic() - started
        print(
            f"\nKernodeck is running: {stack.url}  (API docs: {stack.url}/api/v1/docs), ready in {ready_in:.1f} s."
            " Ctrl-C stops it.\n",
            flush=True,
        )
        if devnet is not None:
            devnet.write_shell_env(DEVNET_ENV, {"KERNODECK_URL": stack.url})
            print(f"{devnet.how_to_pay()}\nThe same settings: . {DEVNET_ENV.relative_to(ROOT)}\n", flush=True)
        while all(p.running() for p in stack.processes.values()):
            time.sleep(0.5)
        print("a process stopped; stopping the others", flush=True)
    except KeyboardInterrupt:
        print("\nstopping ...", flush=True)
    finally:
        if stack is not None:
            stack.stop()
        cleanup.close()
        if devnet is not None:
            devnet.stop()
            DEVNET_ENV.unlink(missing_ok=True)
        if telegram is not None:
            telegram.stop()


if __name__ == "__main__":
    main()
