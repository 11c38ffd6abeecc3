"""The services' typed clients (kernodeck_contracts.clients) on the gateway's RPC client, for the routes: each a
dependency on the RPC client, so the document still lists its 503."""

from typing import Annotated

from fastapi import Depends

from kernodeck_contracts.clients import (
    AccountsClient,
    CatalogClient,
    OrdersClient,
    PaymentsClient,
    ProvisioningClient,
    SupportClient,
)
from kernodeck_gateway.auth import Rpc


async def accounts_client(rpc: Rpc) -> AccountsClient:
    return AccountsClient(rpc.call)


async def catalog_client(rpc: Rpc) -> CatalogClient:
    return CatalogClient(rpc.call)


async def orders_client(rpc: Rpc) -> OrdersClient:
    return OrdersClient(rpc.call)


async def payments_client(rpc: Rpc) -> PaymentsClient:
    return PaymentsClient(rpc.call)


async def provisioning_client(rpc: Rpc) -> ProvisioningClient:
    return ProvisioningClient(rpc.call)


async def support_client(rpc: Rpc) -> SupportClient:
    return SupportClient(rpc.call)


AccountsService = Annotated[AccountsClient, Depends(accounts_client)]
CatalogService = Annotated[CatalogClient, Depends(catalog_client)]
OrdersService = Annotated[OrdersClient, Depends(orders_client)]
PaymentsService = Annotated[PaymentsClient, Depends(payments_client)]
ProvisioningService = Annotated[ProvisioningClient, Depends(provisioning_client)]
SupportService = Annotated[SupportClient, Depends(support_client)]
