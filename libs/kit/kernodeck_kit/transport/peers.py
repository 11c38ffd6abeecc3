"""Another service's typed client (kernodeck_contracts.clients) in a nameko service or an operator command:
each call made on nameko's proxy through `call_service` (its timeout; the peer's ServiceError raised as is)."""

from typing import Any, TypeVar

from nameko.rpc import RpcProxy

from kernodeck_contracts.clients import Call, ServiceClient
from kernodeck_kit.transport.calls import call_service

C = TypeVar("C", bound=ServiceClient)
COMMAND_TIMEOUT_S = 30.0  # an operator command's call, unless it says otherwise


def proxy_call(proxy) -> Call:
    """The transport of a client on nameko's proxy to its service (a worker's, or `cluster.<service>`)."""

    def call(service: str, method: str, /, **kwargs: Any) -> Any:
        return call_service(getattr(proxy, method), **kwargs)

    return call


def on_cluster(cluster, client: type[C], timeout: float = COMMAND_TIMEOUT_S, **options: Any) -> C:
    """`client` on a standalone ClusterRpcProxy (an operator command's), its `timeout` and `options` for every
    call."""
    return client(proxy_call(getattr(cluster, client.service)), timeout=timeout, **options)


class Peer(RpcProxy):
    """`orders = Peer(OrdersClient)`: nameko's RpcProxy to the client's service, given to the worker as the
    client; `options` for every call (a `timeout`)."""

    def __init__(self, client: type[ServiceClient], **options: Any):
        super().__init__(client.service)
        self.client = client
        self.call_options = options  # not `options`: RpcProxy's, for nameko's ServiceProxy

    def get_dependency(self, worker_ctx) -> ServiceClient:
        return self.client(proxy_call(super().get_dependency(worker_ctx)), **self.call_options)
