from kernodeck_contracts.clients.base import ServiceClient, rpc_method


class AccountsClient(ServiceClient):
    """Accounts and their sessions; an account, a session and a link are answered as accounts gives them."""

    service = "accounts"

    @rpc_method
    def register(self, *, first_name: str, last_name: str, email: str, password: str, client_address: str) -> dict:
        """The new account."""

    @rpc_method
    def login(self, *, email: str, password: str, client_address: str) -> dict:
        """The session: `token`, `expires_at` and its `account`."""

    @rpc_method
    def resolve_session(self, *, token: str) -> dict:
        """The session's account."""

    @rpc_method
    def logout(self, *, token: str) -> None: ...

    @rpc_method
    def get_account(self, *, account_id: str) -> dict: ...

    @rpc_method
    def create_telegram_link(self, *, account_id: str, language: str) -> dict:
        """The one-time `url` to the bot."""

    @rpc_method
    def unlink_telegram(self, *, account_id: str) -> None: ...
