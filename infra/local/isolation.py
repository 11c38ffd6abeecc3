"""Throwaway RabbitMQ vhosts and PostgreSQL databases, and a whole stack on them, for tests and benchmarks."""

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from infra.devnet.telegram_double import TelegramDouble
from infra.local.dev_payments import dev_payments_env, keep_dev_rates_fresh
from infra.local.stack import Stack
from infra.testhosts.local import LOCAL_GPUS, local_hosts, provisioning_env, register

# GPUs of the test stacks' hosts: enough for the holds that every payment test takes (rtx4090), and B200
# kept small enough that a test can ask for more lots than there are.
# Every test registers and logs in its customers: at production's argon2 parameters (64 MiB, t=3) each hash is
# 0.2 s of CPU, at these a millisecond.
CHEAP_HASHING = {"ACCOUNTS_ARGON2_TIME_COST": "1", "ACCOUNTS_ARGON2_MEMORY_COST_KIB": "1024"}
STACK_GPUS = {**LOCAL_GPUS, "h100": 64, "rtx4090": 64, "h200": 10}  # h200: the concurrency test's 10 GPUs

PG_ADMIN_URL = os.environ.get("KERNODECK_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
RABBIT_API = os.environ.get("KERNODECK_TEST_RABBIT_API", "http://127.0.0.1:15672/api")
# Where a stack on the machine's broker writes its processes' users (each as its own, as in production).
MANAGEMENT_URL = RABBIT_API.removesuffix("/api").replace("://", "://guest:guest@", 1)


@contextmanager
def temporary_vhost(prefix: str = "kd") -> Iterator[str]:
    """A fresh vhost; yields the AMQP URI that points into it."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=RABBIT_API, auth=("guest", "guest")) as api:
        api.put(f"/vhosts/{name}").raise_for_status()
        api.put(f"/permissions/{name}/guest", json={"configure": ".*", "write": ".*", "read": ".*"}).raise_for_status()
        try:
            yield f"amqp://guest:guest@127.0.0.1:5672/{name}"
        finally:
            api.delete(f"/vhosts/{name}")


@contextmanager
def temporary_databases(
    services: tuple[str, ...], prefix: str = "kd", admin_url: str = PG_ADMIN_URL
) -> Iterator[dict[str, str]]:
    """One fresh PostgreSQL database per service on the server of `admin_url`; yields {service: url}."""
    admin = create_engine(  # pre-ping: the server may have been restarted since (the fault suite restarts its own)
        admin_url.replace("postgresql://", "postgresql+psycopg2://"), isolation_level="AUTOCOMMIT", pool_pre_ping=True
    )
    suffix = uuid.uuid4().hex[:8]
    names = {service: f"{prefix}_{service}_{suffix}" for service in services}
    try:
        with admin.connect() as conn:
            for name in names.values():
                conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield {s: admin.url.set(database=n).render_as_string(hide_password=False) for s, n in names.items()}
    finally:
        with admin.connect() as conn:
            for name in names.values():
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def stack_env(amqp_uri: str, databases: dict[str, str]) -> dict[str, str]:
    return {"AMQP_URI": amqp_uri, **{f"{s.upper()}_DATABASE_URL": url for s, url in databases.items()}}


@contextmanager
def running_stack(
    log_dir: Path,
    prefix: str,
    env: dict | None = None,
    watchers: tuple[str, ...] = (),
    gpus: dict[str, int] | None = None,
    extra_nodes: dict[str, int] | None = None,
    sqlite: bool = False,
    broker: str | None = None,
    pg_admin_url: str = PG_ADMIN_URL,
    production_hashing: bool = False,
    **options,
):
    """A started Stack on a fresh vhost and fresh databases (one per service and per watcher: PostgreSQL, or
    with `sqlite` the embedded default, files under `log_dir`/data), with a GPU test host per model (`gpus`:
    GPUs per model; `extra_nodes`: more hosts of a model) registered as its nodes, notify speaking to a Bot API
    double (`stack.telegram`). `broker` (an AMQP URI) and `pg_admin_url` put it on a broker and a PostgreSQL
    server of the caller's own instead of the machine's. Passwords are hashed cheaply unless `production_hashing`
    (for what times the password queue or the throttles)."""
    rates_file = log_dir / "rates.json"
    fresh_rates = keep_dev_rates_fresh(rates_file)
    databases_of = (*Stack.services, *(f"watcher_{network}" for network in watchers))
    with (
        nullcontext(broker) if broker else temporary_vhost(prefix) as amqp_uri,
        nullcontext({}) if sqlite else temporary_databases(databases_of, prefix, pg_admin_url) as databases,
        local_hosts(log_dir / "testhosts", gpus or STACK_GPUS, log=lambda line: None, extra_nodes=extra_nodes) as hosts,
        TelegramDouble() as telegram,
    ):
        stack_settings = {
            **stack_env(amqp_uri, databases),
            **({"DATA_DIR": str(log_dir / "data")} if sqlite else {}),
            **dev_payments_env(rates_file),
            **provisioning_env(log_dir / "testhosts"),
            "PROVISIONING_SWEEP_INTERVAL_S": "0.5",
            **telegram.settings(),
            "GATEWAY_RPC_TIMEOUT_S": "3",
            "GATEWAY_TRUSTED_PROXIES": "none",  # the tests call the gateway directly; test_access.py names a proxy
            "GATEWAY_COOKIE_SECURE": "false",  # plain HTTP on 127.0.0.1; test_access.py's stack keeps it Secure
            # Every test registers its own customers, all from 127.0.0.1: the registration throttle's
            # production limits are for tests/e2e/test_access.py's own stack.
            "ACCOUNTS_REGISTRATION_CLIENT_LIMIT": "100000",
            "ACCOUNTS_REGISTRATION_NETWORK_LIMIT": "100000",
            "ACCOUNTS_REGISTRATION_OVERALL_LIMIT": "100000",
            # The test machine is shared with unrelated test runs: hashing yields to those only where
            # asked (the registration benchmark), as it yields to the stack's own services in production.
            "ACCOUNTS_PASSWORD_HASHING_NICENESS": "0",
            **({} if production_hashing else CHEAP_HASHING),
            # A test's or a benchmark's one customer piles up unpaid orders, holds and addresses (200 intents
            # racing for 10 GPUs, a thousand intents to time): the per-account limits are the services' own tests'.
            "ORDERS_UNPAID_PER_ACCOUNT": "100000",
            "ORDERS_CREATED_PER_WINDOW": "100000",
            "PROVISIONING_HELD_GPUS_PER_ACCOUNT": "100000",
            "PROVISIONING_NEWCOMERS_HELD_PERCENT": "100",
            "PAYMENTS_EXPIRED_HOLDS_LIMIT": "100000",
            "PAYMENTS_UNFUNDED_ADDRESSES_PER_NETWORK": "100000",
        }
        options.setdefault("bus_users", "" if broker else MANAGEMENT_URL)  # a broker of the caller's: no API
        stack = Stack(
            env={**stack_settings, **(env or {})}, log_dir=log_dir, watchers=watchers, telegram=telegram, **options
        )
        try:
            stack.start()
            register(hosts, stack.env)
            stack.hosts = hosts
            yield stack
        finally:
            fresh_rates.set()
            stack.stop()
            for log in sorted(log_dir.glob("*.log")):
                if b'"level": "ERROR"' in log.read_bytes():
                    print(f"--- errors logged by {log.stem} ---\n{log.read_text()[-4000:]}")
