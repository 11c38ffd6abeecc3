"""The typed clients call each service's methods by parameter name: every client method must be an RPC of its
service, with exactly the service's parameters and the same defaults (nameko binds the call's arguments by
name, so a misspelt one would fail only when called). Not in the unit lane: a service's imports load native
libraries, which that lane's plugin refuses."""

import inspect

import pytest
from nameko.rpc import Rpc

from kernodeck_contracts.clients import CLIENTS, rpc_methods


def service_classes() -> dict[str, type]:
    from kernodeck_accounts.service import AccountsService
    from kernodeck_catalog.service import CatalogService
    from kernodeck_orders.service import OrdersService
    from kernodeck_payments.service import PaymentsService
    from kernodeck_provisioning.service import ProvisioningService
    from kernodeck_support.service import SupportService

    classes = (AccountsService, CatalogService, OrdersService, PaymentsService, ProvisioningService, SupportService)
    return {cls.name: cls for cls in classes}


def is_rpc(method) -> bool:
    return any(isinstance(entrypoint, Rpc) for entrypoint in getattr(method, "nameko_entrypoints", ()))


@pytest.mark.parametrize("client", CLIENTS, ids=lambda client: client.service)
def test_each_client_method_takes_its_service_methods_parameters(client):
    service = service_classes()[client.service]
    for name, parameters in rpc_methods(client).items():
        method = getattr(service, name, None)
        assert method is not None and is_rpc(method), f"{client.service}.{name} is no RPC"
        _self, *expected = inspect.signature(method).parameters.values()
        assert [(p.name, p.default) for p in expected] == [(p.name, p.default) for p in parameters.values()], (
            f"{client.service}.{name}"
        )


def test_every_service_has_its_client():
    assert {client.service for client in CLIENTS} == set(service_classes())
