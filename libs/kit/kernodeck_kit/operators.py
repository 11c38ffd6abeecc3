"""Operator actions are checked in the service that does them (ARCHITECTURE.md rule 9), not only at the gateway.

An RPC marked `@operator_only` runs for one of two callers, named in the call's context (`operator`, the
`nameko.operator` header):

- an operator account, named by the gateway: the service asks accounts (`get_account`) whether it holds the
  operator role now, so a role revoked meanwhile, or a customer's id let through by a gateway's mistake, is
  refused;
- the operator command, `kernodeck-admin`, named `cli:NAME`: believed only when the request came from one of
  the broker users in OPERATOR_BROKER_USERS, as the broker itself vouches for it: RabbitMQ refuses a message
  whose `user_id` property is not the user its connection logged in as, and the kit's rpc entrypoint keeps
  that property as the call's `broker_user` (a header of that name from the caller is dropped).

A method with an `operator_id` argument records who acted: for an account, it must be the checked one; the
command records the name its operator gave (`--as`).
Refusals are `forbidden` (403 at the gateway).
"""

import functools
import getpass
import inspect
from urllib.parse import unquote, urlsplit

from nameko.extensions import DependencyProvider
from nameko.rpc import ServiceProxy
from nameko.standalone.rpc import ClusterProxy, ClusterRpcProxy

from kernodeck_contracts.clients import AccountsClient
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.settings import SETTINGS_KEY, ServiceSettings
from kernodeck_kit.transport.rpc import BROKER_USER

OPERATOR = "operator"  # the context key the gateway and the command set
COMMAND_PREFIX = "cli:"


def broker_user(amqp_uri: str) -> str:
    """The user an AMQP URI logs in as (guest when it names none, as the broker's default)."""
    return unquote(urlsplit(amqp_uri).username or "guest")


class _SignedClusterProxy(ClusterProxy):
    def __init__(self, worker_ctx, reply_listener, user_id: str):
        super().__init__(worker_ctx, reply_listener)
        self._user_id = user_id

    def __getattr__(self, name):
        if name not in self._proxies:
            self._proxies[name] = ServiceProxy(self._worker_ctx, name, self._reply_listener, user_id=self._user_id)
        return self._proxies[name]


class CommandRpcProxy(ClusterRpcProxy):
    """nameko's ClusterRpcProxy for the operator command: on its own broker user (OPERATOR_AMQP_URI, else
    AMQP_URI's), its operator's name in the context, and each request with the user_id property the broker
    checks against the connection's user."""

    def __init__(self, config: dict, operator: str = "", **kwargs):
        operator = operator or f"{COMMAND_PREFIX}{getpass.getuser()}"
        if own := config.get(SETTINGS_KEY, {}).get("operator_amqp_uri"):  # OPERATOR_AMQP_URI
            config = {**config, "AMQP_URI": own}
        super().__init__(config, context_data={OPERATOR: operator}, **kwargs)
        self._proxy = _SignedClusterProxy(self._worker_ctx, self._reply_listener, broker_user(config["AMQP_URI"]))


class OperatorCheck:
    def __init__(self, context: dict, allowed_broker_users: frozenset[str]):
        self.context = context
        self.allowed_broker_users = allowed_broker_users

    def require(self, accounts: AccountsClient) -> str:
        """The checked operator's name (an account id, or `cli:NAME`); ServiceError forbidden when it is none."""
        operator = self.context.get(OPERATOR)
        if not isinstance(operator, str) or not operator:
            raise ServiceError(ErrorCode.FORBIDDEN, "this is for operators only: no operator named")
        if operator.startswith(COMMAND_PREFIX):
            if self.context.get(BROKER_USER) not in self.allowed_broker_users:
                raise ServiceError(
                    ErrorCode.FORBIDDEN, "the operator command is not run with an operator's broker user"
                )
            return operator
        try:
            account = accounts.get_account(account_id=operator)
        except ServiceError as refused:
            if refused.code == ErrorCode.SERVICE_UNAVAILABLE:
                raise
            raise ServiceError(ErrorCode.FORBIDDEN, "this is for operators only") from None  # no such account
        if not account.get("is_operator"):
            raise ServiceError(ErrorCode.FORBIDDEN, "this is for operators only")
        return operator


class Operators(DependencyProvider):
    """`operators = Operators()` on a service with `accounts = Peer(AccountsClient)`, for `@operator_only`."""

    def setup(self):
        # Validated here as the kit's model: the service's own is kept on the container by its Settings.
        self.allowed = ServiceSettings.from_nameko_config(self.container.config).operator_broker_user_set()

    def get_dependency(self, worker_ctx):
        return OperatorCheck(worker_ctx.context_data, self.allowed)


def operator_only(method):
    """Runs the RPC only for a checked operator (below `@rpc`); an account's `operator_id` must be its own."""
    signature = inspect.signature(method)
    has_operator_id = "operator_id" in signature.parameters

    @functools.wraps(method)
    def checked(self, *args, **kwargs):
        operator = self.operators.require(self.accounts)
        if operator.startswith(COMMAND_PREFIX) or not has_operator_id:
            return method(self, *args, **kwargs)
        if signature.bind(self, *args, **kwargs).arguments.get("operator_id") != operator:
            raise ServiceError(ErrorCode.FORBIDDEN, "operator_id is not the operator who asks")
        return method(self, *args, **kwargs)

    return checked
