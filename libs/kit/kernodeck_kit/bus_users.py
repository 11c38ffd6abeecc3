"""The broker users of kernodeck_kit.bus_permissions, written to a vhost through RabbitMQ's management API.

`kernodeck-admin broker apply` (the Kubernetes job `rabbitmq-users`, `make run`) and the test stacks call
`apply`; the management API's URL is RABBITMQ_MANAGEMENT_URL (its user in it, or in RABBITMQ_USER and
RABBITMQ_PASSWORD). Production passwords come from the environment (`BROKER_PASSWORD_<NAME>`, e.g.
BROKER_PASSWORD_WATCHER_BITCOIN, BROKER_PASSWORD_ADMIN); on a development machine `--local` gives each user
the password `local-<name>`: no secret, like guest's, and RabbitMQ's own users on loopback only.
"""

import argparse
import base64
import json
import os
import sys
import urllib.request
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from kernodeck_kit.bus_permissions import OPERATOR, PRINCIPALS, USER_PREFIX, principal

EVERYTHING = {"configure": ".*", "write": ".*", "read": ".*"}


def local_password(name: str) -> str:
    return f"local-{name}"


def env_password(name: str) -> str:
    key = "BROKER_PASSWORD_" + name.upper().replace("-", "_")
    value = os.environ.get(key, "")
    if not value:
        raise SystemExit(f"{key} is not set: every broker user needs its password")
    return value


def uri_for(base_uri: str, name: str, password: str) -> str:
    """`base_uri` (its host, port, vhost and options) logging in as the user of process kind `name`."""
    parts = urlsplit(base_uri)
    host = parts.hostname or "127.0.0.1"
    netloc = f"{quote(USER_PREFIX + name, safe='')}:{quote(password, safe='')}@{host}" + (
        f":{parts.port}" if parts.port else ""
    )
    return urlunsplit(parts._replace(netloc=netloc))


class Management:
    """The few calls of RabbitMQ's HTTP API that set users and permissions."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        self.base = urlunsplit(parts._replace(netloc=host)).rstrip("/")
        # A password the URL cannot hold as it is (the cluster operator's generated ones may have a slash): from
        # the environment, RABBITMQ_USER and RABBITMQ_PASSWORD, when the URL names no user.
        user = unquote(parts.username) if parts.username else os.environ.get("RABBITMQ_USER", "guest")
        password = unquote(parts.password or "") if parts.username else os.environ.get("RABBITMQ_PASSWORD", "guest")
        credentials = f"{user}:{password}"
        self.auth = "Basic " + base64.b64encode(credentials.encode()).decode()

    def put(self, path: str, body: dict) -> None:
        self._send("PUT", path, body)

    def post(self, path: str, body: dict) -> None:
        self._send("POST", path, body)

    def _send(self, method: str, path: str, body: dict) -> None:
        request = urllib.request.Request(
            f"{self.base}/api/{path}",
            data=json.dumps(body).encode(),
            method=method,
            headers={"Authorization": self.auth, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()


def create_vhost(api: Management, vhost: str) -> None:
    """Production's vhost, when it is not there yet: durable queues are quorum queues (replicated on the cluster's nodes) unless declared
    otherwise, and what a queue rejects or expires goes to kernodeck.dead-letters rather than nowhere (events
    that keep failing are set aside by the services themselves, in <service>.dead-letters)."""
    v = quote(vhost, safe="")
    # Through a definitions import: RabbitMQ before 3.11 keeps the default queue type only from there.
    metadata = {"default_queue_type": "quorum", "description": "Kernodeck's RPC and events"}
    api.post("definitions", {"vhosts": [{"name": vhost, "metadata": metadata}]})
    api.put(f"exchanges/{v}/kernodeck.dead-letters", {"type": "fanout", "durable": True})
    api.put(f"queues/{v}/broker.dead-letters", {"durable": True, "arguments": {"x-queue-type": "quorum"}})
    api.post(f"bindings/{v}/e/kernodeck.dead-letters/q/broker.dead-letters", {"routing_key": ""})
    policy = {
        "pattern": "^(evt|rpc)-",
        "apply-to": "queues",
        "definition": {"dead-letter-exchange": "kernodeck.dead-letters"},
    }
    api.put(f"policies/{v}/dead-letters", policy)


def apply(management_url: str, vhost: str, password_of, create: bool = False) -> list[str]:
    """Every principal's user (and the operator's) with its permissions on `vhost` (made first with `create`);
    the users written."""
    api = Management(management_url)
    if create:
        create_vhost(api, vhost)
    v = quote(vhost, safe="")
    written = []
    for p in PRINCIPALS:
        api.put(f"users/{quote(p.user, safe='')}", {"password": password_of(p.name), "tags": ""})
        api.put(f"permissions/{v}/{quote(p.user, safe='')}", p.permissions())
        api.put(f"topic-permissions/{v}/{quote(p.user, safe='')}", p.rpc_topic())
        written.append(p.user)
    operator = USER_PREFIX + OPERATOR
    api.put(f"users/{quote(operator, safe='')}", {"password": password_of(OPERATOR), "tags": ""})
    api.put(f"permissions/{v}/{quote(operator, safe='')}", EVERYTHING)
    written.append(operator)
    return written


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(prog="kernodeck-admin broker", description="the bus's users and permissions")
    commands = cli.add_subparsers(dest="command", required=True)
    apply_cli = commands.add_parser("apply", help="write every process kind's user and permissions to a vhost")
    apply_cli.add_argument(
        "--management-url", default=os.environ.get("RABBITMQ_MANAGEMENT_URL", "http://guest:guest@127.0.0.1:15672")
    )
    apply_cli.add_argument("--vhost", default="/")
    apply_cli.add_argument("--local", action="store_true", help="development passwords (local-<name>)")
    apply_cli.add_argument(
        "--create-vhost", action="store_true", help="production's vhost: quorum queues, dead letters"
    )
    show = commands.add_parser("show", help="each user's permissions, as RabbitMQ gets them")
    show.add_argument("name", nargs="?", help="one process kind: gateway, payments, watcher-bitcoin...")
    args = cli.parse_args(argv)
    if args.command == "show":
        chosen = [principal(args.name)] if args.name else list(PRINCIPALS)
        for p in chosen:
            print(json.dumps({"user": p.user, **p.permissions(), "topic": p.rpc_topic()}, indent=2))
        return 0
    written = apply(args.management_url, args.vhost, local_password if args.local else env_password, args.create_vhost)
    print(f"{len(written)} users with their permissions on vhost {args.vhost}: {', '.join(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
