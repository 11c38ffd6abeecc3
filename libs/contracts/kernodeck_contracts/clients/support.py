from kernodeck_contracts.clients.base import ServiceClient, rpc_method


class SupportClient(ServiceClient):
    """Support requests and extensions; answers as support gives them (the gateway passes them through)."""

    service = "support"

    @rpc_method
    def open_request(
        self,
        *,
        account_id: str,
        order_id: str | None,
        kind: str,
        message: str,
        fields: dict | None = None,
        topup_id: str | None = None,
    ) -> dict: ...

    @rpc_method
    def list_requests(self, *, account_id: str, limit: int | None = None, cursor: str | None = None) -> dict: ...

    @rpc_method
    def list_extensions(self, *, account_id: str, order_ids: list[str]) -> dict[str, list[dict]]:
        """Each order's confirmed extensions, by order id."""

    @rpc_method
    def list_queue(self, *, status: str | None = None, limit: int | None = None, cursor: str | None = None) -> dict:
        """For operators."""

    @rpc_method
    def get_request(self, *, request_id: str) -> dict:
        """For operators."""

    @rpc_method
    def answer_request(self, *, operator_id: str, request_id: str, text: str) -> dict:
        """For operators."""

    @rpc_method
    def confirm_extension(self, *, operator_id: str, request_id: str, note: str | None = None) -> dict:
        """For operators."""

    @rpc_method
    def confirm_configuration(
        self,
        *,
        operator_id: str,
        request_id: str,
        model: str,
        lots: int,
        duration_days: int,
        note: str | None = None,
    ) -> dict:
        """For operators."""

    @rpc_method
    def refuse_extension(self, *, operator_id: str, request_id: str, reason: str) -> dict:
        """For operators."""
