"""The services' typed clients (kernodeck_contracts.clients) on the gateway's RPC client, for the routes."""

from typing import Annotated

from fastapi import Depends

from kernodeck_contracts.clients import CatalogClient
from kernodeck_gateway.auth import Rpc


async def catalog_client(rpc: Rpc) -> CatalogClient:
    return CatalogClient(rpc.call)


CatalogService = Annotated[CatalogClient, Depends(catalog_client)]
