"""Settings: the shared service keys plus the account policy (ACCOUNTS_*)."""

from datetime import timedelta

from argon2.profiles import RFC_9106_LOW_MEMORY
from pydantic import BaseModel, Field, model_validator
from pydantic_settings import SettingsConfigDict

from kernodeck_accounts import telegram_links
from kernodeck_accounts.domain import LoginThrottle, ThrottleRule
from kernodeck_kit.settings import ServiceSettings


class AccountsPolicy(BaseModel):
    session_ttl_days: int = Field(30, ge=1)
    login_email_failure_limit: int = Field(5, ge=1)
    login_email_window_s: int = Field(15 * 60, ge=1)
    login_address_failure_limit: int = Field(20, ge=1)
    login_address_window_s: int = Field(15 * 60, ge=1)
    argon2_time_cost: int = Field(RFC_9106_LOW_MEMORY.time_cost, ge=1)
    argon2_memory_cost_kib: int = Field(RFC_9106_LOW_MEMORY.memory_cost, ge=8)
    argon2_parallelism: int = Field(RFC_9106_LOW_MEMORY.parallelism, ge=1)

    @model_validator(mode="after")
    def _argon2_memory_covers_lanes(self):
        if self.argon2_memory_cost_kib < 8 * self.argon2_parallelism:
            raise ValueError("argon2 needs at least 8 KiB of memory per lane of parallelism")
        return self

    @property
    def session_ttl(self) -> timedelta:
        return timedelta(days=self.session_ttl_days)

    @property
    def login_throttle(self) -> LoginThrottle:
        return LoginThrottle(
            per_email=ThrottleRule(self.login_email_failure_limit, timedelta(seconds=self.login_email_window_s)),
            per_address=ThrottleRule(self.login_address_failure_limit, timedelta(seconds=self.login_address_window_s)),
        )


class AccountsSettings(ServiceSettings, AccountsPolicy, telegram_links.TelegramLinkPolicy):
    model_config = SettingsConfigDict(env_prefix="ACCOUNTS_", extra="ignore")

    service_name: str = "accounts"
    metrics_port: int = 9102
