from kernodeck_contracts.clients.base import ServiceClient, rpc_method
from kernodeck_contracts.rpc import CatalogListing, Quote


class CatalogClient(ServiceClient):
    """The catalog: what can be ordered, and its price."""

    service = "catalog"

    @rpc_method
    def list_catalog(self) -> CatalogListing: ...

    @rpc_method
    def quote(self, *, model: str, duration_days: int, lots: int, preparation: str) -> Quote:
        """Price a configuration; a ServiceError (validation_error, per field) when it breaks a rule."""
