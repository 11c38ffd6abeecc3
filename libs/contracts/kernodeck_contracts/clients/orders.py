from kernodeck_contracts.clients.base import ServiceClient, rpc_method
from kernodeck_contracts.rpc import OrderToPay


class OrdersClient(ServiceClient):
    """Orders; an order, and a page of them, answered as orders gives them (the gateway presents them)."""

    service = "orders"

    @rpc_method
    def create_order(
        self,
        *,
        account_id: str,
        model: str,
        duration_days: int,
        lots: int,
        preparation: str,
        ssh_public_key: str | None = None,
        preparation_note: str | None = None,
    ) -> dict: ...

    @rpc_method
    def list_orders(self, *, account_id: str, limit: int | None = None, cursor: str | None = None) -> dict: ...

    @rpc_method
    def get_order(self, *, account_id: str, order_id: str) -> dict: ...

    @rpc_method
    def get_payable_order(self, *, account_id: str, order_id: str) -> OrderToPay: ...

    @rpc_method
    def cancel_order(self, *, account_id: str, order_id: str) -> dict: ...
