"""A typed client's method is declared once, by its signature, and called on either transport.

`@rpc_method` on a declaration whose parameters are keyword-only, named exactly as the service's method names
its own (nameko binds the call's arguments by name), and whose return annotation is what the answer is read as:
a pydantic result (kernodeck_contracts.rpc) for an answer the caller reads, or `dict`/`list[dict]` for one the
gateway passes through to its presenters and response models, which shape what the API shows. An argument left
out is not sent: the service's own default applies.

The client is built on its caller's transport, `call(service, method, /, **kwargs)`, with options for it (a
`timeout`; the gateway's `operator`): on the gateway's `RpcClient.call` (asyncio) a method returns an awaitable
of its result; on a nameko proxy (kernodeck_kit.transport.peers, eventlet) the result itself.
"""

import functools
import inspect
from collections.abc import Callable
from typing import Any, Protocol, Self, get_type_hints

from pydantic import TypeAdapter


class Call(Protocol):
    def __call__(self, service: str, method: str, /, **kwargs: Any) -> Any: ...


def rpc_method(declaration: Callable) -> Callable:
    signature = inspect.signature(declaration)
    _self, *parameters = signature.parameters.values()
    if any(p.kind is not inspect.Parameter.KEYWORD_ONLY for p in parameters):
        raise TypeError(f"{declaration.__qualname__}: an RPC method's parameters are keyword-only")
    result = TypeAdapter(get_type_hints(declaration)["return"])
    name = declaration.__name__

    @functools.wraps(declaration)
    def call(self: "ServiceClient", **arguments: Any) -> Any:
        signature.bind(self, **arguments)  # an unknown or missing argument fails here, not in the service
        answer = self._call(self.service, name, **self._options, **arguments)
        if inspect.isawaitable(answer):
            return _read(answer, result)
        return result.validate_python(answer)

    call.rpc_parameters = {p.name: p for p in parameters}
    return call


async def _read(answer: Any, result: TypeAdapter) -> Any:
    return result.validate_python(await answer)


class ServiceClient:
    """The methods of `service`, each declared with `@rpc_method`; `health`, which every service has, here."""

    service: str

    def __init__(self, call: Call, **options: Any):
        self._call = call
        self._options = options

    def using(self, **options: Any) -> Self:
        """The same client with these transport options too (a longer timeout, the operator it calls for)."""
        return type(self)(self._call, **{**self._options, **options})

    @rpc_method
    def health(self) -> dict:
        """Answers while the service runs, with what it tells of itself (payments: its chain watchers)."""


def rpc_methods(client: type[ServiceClient]) -> dict[str, dict[str, inspect.Parameter]]:
    """The client's RPC methods: name -> its parameters."""
    return {
        name: method.rpc_parameters for name, method in inspect.getmembers(client) if hasattr(method, "rpc_parameters")
    }
