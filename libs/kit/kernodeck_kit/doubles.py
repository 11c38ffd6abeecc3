"""Test doubles of a neighbour's RPC, for the tests of the services that call it (never for production)."""

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.transport.rpc import rpc


class ProvisioningDouble:
    """provisioning's RPCs as payments calls them: holds (`free_gpus` GPUs in all, then OUT_OF_CAPACITY), and the
    account's SSH key (every account has one, but those a test names in `keyless`).

    State lives on the class (each worker is a new instance); `reset()` before each test."""

    name = "provisioning"
    free_gpus = 1000
    holds: dict[str, int] = {}
    released: list[str] = []
    asked: list[tuple[str, str]] = []  # every hold asked for: (order_id, until)
    keyless: set[str] = set()

    @classmethod
    def reset(cls, free_gpus: int = 1000) -> type["ProvisioningDouble"]:
        cls.free_gpus, cls.holds, cls.released, cls.asked, cls.keyless = free_gpus, {}, [], [], set()
        return cls

    @rpc
    def get_ssh_key(self, account_id):
        key = None if account_id in ProvisioningDouble.keyless else f"ssh-ed25519 AAAA-{account_id}"
        return {"ssh_public_key": key}

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
