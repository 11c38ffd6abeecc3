"""Typed clients of the services' RPC methods: named, typed arguments and pydantic results (`rpc.py`), in
place of `call("service", "method", ...)` with positional arguments and dicts.

A client is built on the caller's transport, `call(service, method, /, **kwargs)` awaited: the gateway's
`RpcClient.call`. Arguments travel by name, so they are matched to the method's parameters by name.
"""

from typing import Any, Protocol

from kernodeck_contracts.rpc import CatalogListing, Quote


class Call(Protocol):
    async def __call__(self, service: str, method: str, /, **kwargs: Any) -> Any: ...


class CatalogClient:
    """The catalog's methods."""

    service = "catalog"

    def __init__(self, call: Call):
        self._call = call

    async def list_catalog(self) -> CatalogListing:
        return CatalogListing.model_validate(await self._call(self.service, "list_catalog"))

    async def quote(self, *, model: str, duration_days: int, lots: int, preparation: str) -> Quote:
        """Price a configuration; a ServiceError (validation_error, per field) when it breaks a rule."""
        answer = await self._call(
            self.service, "quote", model=model, duration_days=duration_days, lots=lots, preparation=preparation
        )
        return Quote.model_validate(answer)
