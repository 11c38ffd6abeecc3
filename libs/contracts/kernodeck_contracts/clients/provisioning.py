from kernodeck_contracts.clients.base import ServiceClient, rpc_method
from kernodeck_contracts.rpc import Hold


class ProvisioningClient(ServiceClient):
    """Capacity held for payments, SSH keys and access, the GPU nodes; answers as provisioning gives them (the
    gateway passes them through), but for a hold."""

    service = "provisioning"

    @rpc_method
    def hold_capacity(
        self,
        *,
        order_id: str,
        account_id: str,
        model_id: str,
        gpus: int,
        until: str,
        account_key_needed: bool = False,
        paid_now: bool = False,
    ) -> Hold:
        """Hold the order's GPUs until `until` (RFC 3339); idempotent per order."""

    @rpc_method
    def release_hold(self, *, order_id: str) -> dict: ...

    @rpc_method
    def set_ssh_key(self, *, account_id: str, ssh_public_key: str) -> dict: ...

    @rpc_method
    def get_ssh_key(self, *, account_id: str) -> dict: ...

    @rpc_method
    def get_access(self, *, account_id: str, order_ids: list[str]) -> dict:
        """The access of each of the orders whose rental is live, by order id."""

    @rpc_method
    def add_node(self, *, host: str, port: int, host_key: str, model: str, gpu_count: int, note: str = "") -> dict:
        """For operators."""

    @rpc_method
    def check_node(self, *, node_id: str) -> dict:
        """For operators."""

    @rpc_method
    def set_node_state(self, *, node_id: str, state: str, note: str = "") -> dict:
        """For operators."""

    @rpc_method
    def list_nodes(self) -> list[dict]:
        """For operators."""
