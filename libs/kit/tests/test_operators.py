"""`@operator_only` on the real broker: an operator RPC runs for an account accounts says is an operator now,
or for the operator command from an operator's broker user (as the broker vouches: user_id); for no one else,
whatever the caller puts in the call's context or headers."""

import pytest
from nameko.standalone.rpc import ClusterRpcProxy

from kernodeck_contracts.clients import AccountsClient
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.operators import CommandRpcProxy, Operators, operator_only
from kernodeck_kit.settings import SETTINGS_KEY
from kernodeck_kit.transport.calls import RemoteServiceError
from kernodeck_kit.transport.peers import Peer
from kernodeck_kit.transport.rpc import rpc

ACCOUNTS = {"op-1": True, "customer-1": False}


class Accounts:
    """A double of accounts' get_account (the real one's answer has these fields, among others)."""

    name = "accounts"

    @rpc
    def get_account(self, account_id):
        if account_id not in ACCOUNTS:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such account")
        return {"id": account_id, "is_operator": ACCOUNTS[account_id]}


class Desk:
    name = "desk"
    accounts = Peer(AccountsClient)
    operators = Operators()

    @rpc
    @operator_only
    def resolve(self, operator_id, item):
        return f"{item} by {operator_id}"

    @rpc
    @operator_only
    def list_items(self):
        return ["item"]


@pytest.fixture
def config(rabbit_config):
    return rabbit_config


def start(container_factory, config, broker_users: str):
    settings = {"service_name": "desk", "operator_broker_users": broker_users}
    container_factory(Accounts, config).start()
    container_factory(Desk, {**config, SETTINGS_KEY: settings}).start()


def call(config, method: str, *args, command: str = "", **options):
    proxy = CommandRpcProxy(config, command, timeout=20) if command else ClusterRpcProxy(config, timeout=20, **options)
    with proxy as cluster:
        return getattr(cluster.desk, method)(*args)


def refused(config, method: str, *args, **options) -> str:
    with pytest.raises(RemoteServiceError) as error:
        call(config, method, *args, **options)
    return error.value.code


def test_an_operator_account_named_in_the_context_may_act_a_customer_or_nobody_may_not(container_factory, config):
    start(container_factory, config, broker_users="kernodeck-admin")
    as_operator = {"context_data": {"operator": "op-1"}}
    assert call(config, "resolve", "op-1", "review 7", **as_operator) == "review 7 by op-1"
    assert call(config, "list_items", **as_operator) == ["item"]
    assert refused(config, "list_items") == ErrorCode.FORBIDDEN
    assert refused(config, "list_items", context_data={"operator": "customer-1"}) == ErrorCode.FORBIDDEN
    assert refused(config, "list_items", context_data={"operator": "nobody"}) == ErrorCode.FORBIDDEN
    # Acting as an operator, in another operator's name: refused.
    assert refused(config, "resolve", "op-2", "review 7", **as_operator) == ErrorCode.FORBIDDEN


def test_the_command_is_believed_only_from_an_operators_broker_user(container_factory, config):
    start(container_factory, config, broker_users="kernodeck-admin")
    # The tests' user is guest, not an operator's broker user: refused, even when the caller claims otherwise.
    assert refused(config, "list_items", command="cli:lan") == ErrorCode.FORBIDDEN
    spoofed = {"context_data": {"operator": "cli:lan", "broker_user": "kernodeck-admin"}}
    assert refused(config, "list_items", **spoofed) == ErrorCode.FORBIDDEN


def test_the_command_from_an_operators_broker_user_may_act(container_factory, config):
    start(container_factory, config, broker_users="guest")
    assert call(config, "resolve", "cli:lan", "review 8", command="cli:lan") == "review 8 by cli:lan"
    # Without the user_id the broker checks, the same call is not believed.
    assert refused(config, "list_items", context_data={"operator": "cli:lan"}) == ErrorCode.FORBIDDEN
