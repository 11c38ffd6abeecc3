"""Test doubles of a neighbour's RPC, for the tests of the services that call it (never for production)."""

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_contracts.statuses import OrderStatus
from kernodeck_kit.transport.rpc import rpc


class ProvisioningDouble:
    """provisioning's RPCs as payments calls them: holds (`free_gpus` GPUs in all, then OUT_OF_CAPACITY), refused
    for an order without a key (`account_key_needed`) of an account a test names in `keyless` (every other has a
    key).

    State lives on the class (each worker is a new instance); `reset()` before each test."""

    name = "provisioning"
    free_gpus = 1000
    holds: dict[str, int] = {}
    released: list[str] = []
    asked: list[tuple[str, str]] = []  # every hold asked for: (order_id, until)
    paid_now: list[str] = []  # the orders whose hold was asked for with a payment in the same call
    keyless: set[str] = set()

    @classmethod
    def reset(cls, free_gpus: int = 1000) -> type["ProvisioningDouble"]:
        cls.free_gpus, cls.holds, cls.released, cls.asked, cls.keyless = free_gpus, {}, [], [], set()
        cls.paid_now = []
        return cls

    @rpc(expected_exceptions=ServiceError)
    def hold_capacity(self, order_id, account_id, model_id, gpus, until, account_key_needed=False, paid_now=False):
        cls = ProvisioningDouble
        if account_key_needed and account_id in cls.keyless:
            raise ServiceError(ErrorCode.SSH_KEY_REQUIRED, "no SSH key on the order nor the account")
        cls.asked.append((order_id, until))
        if paid_now:
            cls.paid_now.append(order_id)
        new = order_id not in cls.holds
        if new:
            if gpus > cls.free_gpus:
                raise ServiceError(ErrorCode.OUT_OF_CAPACITY, f"not enough {model_id} GPUs")
            cls.free_gpus -= gpus
            cls.holds[order_id] = gpus
        return {"order_id": order_id, "held_until": until, "new": new}

    @rpc
    def release_hold(self, order_id):
        cls = ProvisioningDouble
        gpus = cls.holds.pop(order_id, None)
        if gpus is not None:
            cls.free_gpus += gpus
            cls.released.append(order_id)
        return {"released": gpus is not None}


class OrdersDouble:
    """orders' RPC as payments calls it: an order it is asked to be paid before its `order_created` reached
    payments, from the orders a test `record`s here (an OrderCreated and the status now); not_found for any other
    (another account's too, as orders answers).

    State lives on the class (each worker is a new instance); `reset()` before each test."""

    name = "orders"
    known: dict = {}

    @classmethod
    def reset(cls) -> type["OrdersDouble"]:
        cls.known = {}
        return cls

    @classmethod
    def record(cls, created, status: str = OrderStatus.AWAITING_PAYMENT) -> None:
        cls.known[created.order_id] = (created, status)

    @rpc(expected_exceptions=ServiceError)
    def get_payable_order(self, account_id, order_id):
        created, status = OrdersDouble.known.get(order_id, (None, None))
        if created is None or created.account_id != account_id:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such order")
        return {"created": created.to_message(), "status": status}
