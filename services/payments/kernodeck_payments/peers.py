"""The services payments asks over RPC, behind the Protocols its use cases name (use_cases/instructions.py)."""

from datetime import datetime

from nameko.rpc import RpcProxy

from kernodeck_contracts.events import OrderCreated
from kernodeck_kit.transport.calls import call_service
from kernodeck_payments.domain.orders import PayableOrder, account_key_needed, created_order


class RpcOrders:
    def __init__(self, orders: RpcProxy):
        self.orders = orders  # named as the service's proxy: tests/integration/test_bus_permissions.py reads the calls

    def payable_order(self, account_id: str, order_id: str) -> PayableOrder:
        answer = call_service(self.orders.get_payable_order, account_id, order_id)
        return created_order(OrderCreated.from_message(answer["created"]), answer["status"])


class RpcProvisioning:
    def __init__(self, provisioning: RpcProxy):
        self.provisioning = provisioning

    def hold(self, order: PayableOrder, until: datetime, paid_now: bool) -> bool:
        # provisioning checks the account's key in the same call when the order brought none.
        held = call_service(
            self.provisioning.hold_capacity,
            order.order_id,
            order.account_id,
            order.model_id,
            order.total_gpus,
            until.isoformat(),
            account_key_needed=account_key_needed(order),
            paid_now=paid_now,
        )
        return held["new"]

    def release(self, order_id: str) -> None:
        call_service(self.provisioning.release_hold, order_id)
