"""Test doubles of a neighbour's RPC, for the tests of the services that call it (never for production)."""

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.transport.rpc import rpc


class ProvisioningDouble:
    """provisioning's hold RPCs as payments calls them: `free_gpus` GPUs in all, then OUT_OF_CAPACITY.

    State lives on the class (each worker is a new instance); `reset()` before each test."""

    name = "provisioning"
    free_gpus = 1000
    holds: dict[str, int] = {}
    released: list[str] = []
    asked: list[tuple[str, str]] = []  # every hold asked for: (order_id, until)

    @classmethod
    def reset(cls, free_gpus: int = 1000) -> type["ProvisioningDouble"]:
        cls.free_gpus, cls.holds, cls.released, cls.asked = free_gpus, {}, [], []
        return cls

    @rpc(expected_exceptions=ServiceError)
    def hold_capacity(self, order_id, account_id, model_id, gpus, until):
        cls = ProvisioningDouble
        cls.asked.append((order_id, until))
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
