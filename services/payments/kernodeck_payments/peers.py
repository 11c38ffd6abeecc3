"""The services payments asks over RPC, behind the Protocols its use cases name (use_cases/instructions.py)."""

from datetime import datetime

from kernodeck_contracts.clients import OrdersClient, ProvisioningClient
from kernodeck_contracts.events import OrderCreated
from kernodeck_payments.domain.orders import PayableOrder, account_key_needed, created_order


class RpcOrders:
    def __init__(self, orders: OrdersClient):
        self.orders = orders  # named as the service's peer: tests/integration/test_bus_permissions.py reads the calls

    def payable_order(self, account_id: str, order_id: str) -> PayableOrder:
        answer = self.orders.get_payable_order(account_id=account_id, order_id=order_id)
        return created_order(OrderCreated.from_message(answer.created), answer.status)


class RpcProvisioning:
    def __init__(self, provisioning: ProvisioningClient):
        self.provisioning = provisioning

    def hold(self, order: PayableOrder, until: datetime, paid_now: bool) -> bool:
        # provisioning checks the account's key in the same call when the order brought none.
        held = self.provisioning.hold_capacity(
            order_id=order.order_id,
            account_id=order.account_id,
            model_id=order.model_id,
            gpus=order.total_gpus,
            until=until.isoformat(),
            account_key_needed=account_key_needed(order),
            paid_now=paid_now,
        )
        return held.new

    def release(self, order_id: str) -> None:
        self.provisioning.release_hold(order_id=order_id)
