"""Typed clients of the services' RPC methods, one per service: named, typed arguments and pydantic results
(`rpc.py`), in place of `call("service", "method", ...)` with positional arguments (clients/base.py says how)."""

from kernodeck_contracts.clients.accounts import AccountsClient
from kernodeck_contracts.clients.base import Call, ServiceClient, rpc_methods
from kernodeck_contracts.clients.catalog import CatalogClient
from kernodeck_contracts.clients.orders import OrdersClient
from kernodeck_contracts.clients.payments import PaymentsClient
from kernodeck_contracts.clients.provisioning import ProvisioningClient
from kernodeck_contracts.clients.support import SupportClient

CLIENTS = (AccountsClient, CatalogClient, OrdersClient, PaymentsClient, ProvisioningClient, SupportClient)

__all__ = [
    "CLIENTS",
    "AccountsClient",
    "Call",
    "CatalogClient",
    "OrdersClient",
    "PaymentsClient",
    "ProvisioningClient",
    "ServiceClient",
    "SupportClient",
    "rpc_methods",
]
