from kernodeck_contracts.clients.base import ServiceClient, rpc_method
from kernodeck_contracts.rpc import WatchedPage


class PaymentsClient(ServiceClient):
    """Payments, top-ups, the balance and the review queue; their answers as payments gives them (the gateway
    presents them), but for the watchers' pages of addresses."""

    service = "payments"

    @rpc_method
    def list_methods(self) -> list[dict]: ...

    @rpc_method
    def create_order_payment(self, *, account_id: str, order_id: str, asset: str, network: str) -> dict: ...

    @rpc_method
    def create_topup(self, *, account_id: str, amount_usd_cents: int, asset: str, network: str) -> dict: ...

    @rpc_method
    def create_extension_payment(self, *, account_id: str, extension_id: str, asset: str, network: str) -> dict: ...

    @rpc_method
    def get_payment(self, *, account_id: str, payment_id: str) -> dict: ...

    @rpc_method
    def list_order_payments(self, *, account_id: str, order_id: str) -> list[dict]: ...

    @rpc_method
    def list_payments_for_orders(self, *, account_id: str, order_ids: list[str]) -> dict[str, list[dict]]:
        """Each order's (or extension's) payments, by its id."""

    @rpc_method
    def list_topups(self, *, account_id: str, limit: int | None = None, cursor: str | None = None) -> dict: ...

    @rpc_method
    def get_topup(self, *, account_id: str, topup_id: str) -> dict: ...

    @rpc_method
    def list_payment_outcomes(self, *, account_id: str, payment_ids: list[str]) -> dict[str, dict]:
        """What each payment brought to the balance and the checks it went to, by payment id."""

    @rpc_method
    def report_payment(self, *, account_id: str, payment_id: str) -> dict: ...

    @rpc_method
    def get_balance(self, *, account_id: str) -> dict: ...

    @rpc_method
    def list_ledger(self, *, account_id: str, limit: int | None = None, cursor: str | None = None) -> dict: ...

    @rpc_method
    def pay_with_balance(self, *, account_id: str, order_id: str) -> dict: ...

    @rpc_method
    def pay_extension_with_balance(self, *, account_id: str, extension_id: str) -> dict: ...

    @rpc_method
    def list_reviews(self, *, status: str | None = None, limit: int | None = None, cursor: str | None = None) -> dict:
        """For operators."""

    @rpc_method
    def resolve_review(
        self, *, operator_id: str, review_id: str, decision: str, amount_usd_cents: int | None, note: str
    ) -> dict:
        """For operators."""

    @rpc_method
    def set_method_enabled(self, *, operator_id: str, asset: str, network: str, enabled: bool) -> dict:
        """For operators."""

    @rpc_method
    def watched_addresses(self, *, network: str, after: str | None = None, limit: int = 5000) -> WatchedPage:
        """A page of the addresses payments watches on `network`, after the page that `after` ends."""
