"""The accounts' nameko entrypoints: thin, over the use cases."""

import logging

from nameko.timer import timer

from kernodeck_accounts import telegram_links, use_cases
from kernodeck_accounts.config import AccountsSettings
from kernodeck_accounts.dependencies import AccountRules
from kernodeck_accounts.domain import Account
from kernodeck_accounts.store import SqlAccounts
from kernodeck_contracts.errors import ServiceError
from kernodeck_kit.transport.dependencies import Database, Instrumented, Settings
from kernodeck_kit.transport.rpc import rpc
from kernodeck_kit.types import rfc3339, utcnow
from kernodeck_kit.units import SqlUnits

log = logging.getLogger(__name__)


def account_view(account: Account) -> dict:
    return {
        "id": account.id,
        "first_name": account.first_name,
        "last_name": account.last_name,
        "email": account.email,
        "created_at": rfc3339(account.created_at),
        "is_operator": account.is_operator,
    }


class AccountsService:
    name = "accounts"

    db = Database()
    instrumented = Instrumented()
    rules = AccountRules()
    settings = Settings(AccountsSettings)

    @property
    def units(self) -> SqlUnits:
        return SqlUnits(self.db, SqlAccounts)

    @rpc(expected_exceptions=ServiceError)
    def health(self) -> dict:
        return {"service": self.name}

    @rpc(expected_exceptions=ServiceError)
    def register(self, first_name, last_name, email, password, client_address) -> dict:
        account = use_cases.register(
            self.units, self.rules, utcnow, first_name, last_name, email, password, client_address
        )
        return account_view(account)

    @rpc(expected_exceptions=ServiceError)
    def login(self, email, password, client_address) -> dict:
        session = use_cases.login(self.units, self.rules, utcnow, email, password, client_address)
        return {
            "token": session.token,
            "expires_at": rfc3339(session.expires_at),
            "account": account_view(session.account),
        }

    @rpc(expected_exceptions=ServiceError)
    def resolve_session(self, token) -> dict:
        return account_view(use_cases.resolve_session(self.units, utcnow, token))

    @rpc(expected_exceptions=ServiceError)
    def logout(self, token) -> None:
        use_cases.logout(self.units, utcnow, token)

    @rpc(expected_exceptions=ServiceError)
    def get_account(self, account_id) -> dict:
        return account_view(use_cases.get_account(self.units, account_id))

    @rpc(expected_exceptions=ServiceError)
    def create_telegram_link(self, account_id, language) -> dict:
        """A one-time t.me deep link that binds a chat to the account: {"url", "expires_at"}."""
        link = telegram_links.create(self.db, self.settings, account_id, language, utcnow())
        log.info("telegram link created", extra={"account_id": account_id})
        return link

    @rpc(expected_exceptions=ServiceError)
    def unlink_telegram(self, account_id) -> None:
        telegram_links.unlink(self.db, account_id)

    @timer(interval=3600)
    def purge_stale(self) -> None:
        now = utcnow()
        use_cases.purge_stale(self.units, self.rules, now)
        with self.db.transaction() as tx:
            telegram_links.purge(tx.session, now - self.settings.telegram_link_throttle.window, now)
