"""The accounts' nameko entrypoints: thin, over the domain, the store and the hasher."""

import logging

from nameko.rpc import rpc
from nameko.timer import timer
from sqlalchemy.exc import IntegrityError

from kernodeck_accounts import store, telegram_links
from kernodeck_accounts.config import AccountsSettings
from kernodeck_accounts.dependencies import AccountRules
from kernodeck_accounts.domain import new_session_token, nfc, normalize_email, token_hash, validate_registration
from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.nameko_deps import Database, Instrumented, Settings
from kernodeck_kit.types import rfc3339, utcnow

log = logging.getLogger(__name__)


def email_taken() -> ServiceError:
    return ServiceError(ErrorCode.EMAIL_TAKEN, "an account with this email already exists")


def invalid_credentials() -> ServiceError:
    return ServiceError(ErrorCode.INVALID_CREDENTIALS, "email or password is incorrect")


def unauthenticated() -> ServiceError:
    return ServiceError(ErrorCode.UNAUTHENTICATED, "not logged in or session expired")


def account_view(row: store.AccountRow) -> dict:
    return {
        "id": row.id,
        "first_name": row.first_name,
        "last_name": row.last_name,
        "email": row.email,
        "created_at": rfc3339(row.created_at),
        "is_operator": row.is_operator,
    }


class AccountsService:
    name = "accounts"

    db = Database()
    instrumented = Instrumented()
    rules = AccountRules()
    settings = Settings(AccountsSettings)

    @rpc(expected_exceptions=ServiceError)
    def health(self) -> dict:
        return {"service": self.name}

    @rpc(expected_exceptions=ServiceError)
    def register(self, first_name, last_name, email, password) -> dict:
        registration = validate_registration(first_name, last_name, email, password)
        # Checked before hashing to spare the work; the unique index settles a race.
        with self.db.read() as session:
            if store.find_account(session, registration.email_normalized) is not None:
                raise email_taken()
        password_hash = self.rules.passwords.hash(registration.password)
        try:
            with self.db.transaction() as tx:
                row = store.add_account(tx.session, registration, password_hash)
        except IntegrityError:
            raise email_taken() from None
        log.info("account registered", extra={"account_id": row.id})
        return account_view(row)

    @rpc(expected_exceptions=ServiceError)
    def login(self, email, password, client_address) -> dict:
        if not isinstance(email, str) or not isinstance(password, str):
            raise invalid_credentials()
        email_key, password = normalize_email(email), nfc(password)
        throttle = self.rules.throttle
        # The attempt is recorded as a failure before its password is checked, in the same locked
        # transaction as the count: parallel guesses each see the ones before them, so exactly
        # `limit` get checked. Success clears the email's failures, this attempt's included.
        with self.db.transaction() as tx:
            store.lock_login_keys(tx.session, email_key, client_address)
            now = utcnow()
            wait = throttle.retry_after(
                store.failures_by_email(tx.session, email_key, now - throttle.per_email.window),
                store.failures_by_address(tx.session, client_address, now - throttle.per_address.window),
                now,
            )
            if not wait:
                store.record_failure(tx.session, email_key, client_address, now)
            account = store.find_account(tx.session, email_key)
        if wait:
            log.warning("login throttled", extra={"client_address": client_address, "retry_after": wait})
            raise ServiceError(ErrorCode.TOO_MANY_REQUESTS, "too many failed logins, try again later", retry_after=wait)

        passwords = self.rules.passwords
        if not passwords.verify(account.password_hash if account else None, password):
            raise invalid_credentials()

        new_hash = passwords.hash(password) if passwords.needs_rehash(account.password_hash) else None
        token = new_session_token()
        expires_at = now + self.rules.session_ttl
        with self.db.transaction() as tx:
            store.clear_failures(tx.session, email_key)
            if new_hash is not None:
                store.set_password_hash(tx.session, account.id, new_hash)
            store.add_session(tx.session, token_hash(token), account.id, now, expires_at)
        log.info("logged in", extra={"account_id": account.id})
        return {"token": token, "expires_at": rfc3339(expires_at), "account": account_view(account)}

    @rpc(expected_exceptions=ServiceError)
    def resolve_session(self, token) -> dict:
        if not isinstance(token, str):
            raise unauthenticated()
        with self.db.read() as session:
            account = store.session_account(session, token_hash(token), utcnow())
        if account is None:
            raise unauthenticated()
        return account_view(account)

    @rpc(expected_exceptions=ServiceError)
    def logout(self, token) -> None:
        if isinstance(token, str):
            with self.db.transaction() as tx:
                store.revoke_session(tx.session, token_hash(token), utcnow())

    @rpc(expected_exceptions=ServiceError)
    def get_account(self, account_id) -> dict:
        with self.db.read() as session:
            row = session.get(store.AccountRow, account_id) if isinstance(account_id, str) else None
        if row is None:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such account")
        return account_view(row)

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
        throttle = self.rules.throttle
        longest_window = max(throttle.per_email.window, throttle.per_address.window)
        with self.db.transaction() as tx:
            store.purge_stale(tx.session, now, now - longest_window)
            telegram_links.purge(tx.session, now - self.settings.telegram_link_throttle.window, now)
