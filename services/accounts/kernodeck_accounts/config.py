"""Settings: the shared service keys plus the account policy (ACCOUNTS_*)."""

from datetime import timedelta

from argon2.profiles import RFC_9106_LOW_MEMORY
from pydantic import BaseModel, Field, model_validator
from pydantic_settings import SettingsConfigDict

from kernodeck_accounts import telegram_links
from kernodeck_accounts.admission import Budget, Kind
from kernodeck_accounts.domain import Backoff, LoginThrottle, RegistrationThrottle, ThrottleRule
from kernodeck_kit.settings import ServiceSettings

FREE_WORKERS = 8  # workers the password queue never holds: session checks and the rest


class AccountsPolicy(BaseModel):
    session_ttl_days: int = Field(30, ge=1)
    login_pair_free_failures: int = Field(5, ge=1)
    login_client_free_failures: int = Field(20, ge=1)
    login_window_s: int = Field(15 * 60, ge=1)
    login_backoff_base_s: float = Field(1.0, gt=0)
    login_backoff_max_s: float = Field(15 * 60, gt=0)
    # A client whose login (or registration) succeeded within this many days, with no failed login since,
    # is known: its logins go ahead of other clients' in the password queue.
    known_client_days: float = Field(30, gt=0)
    # Per address (an IPv6 /64), and per network (IPv4 /24, IPv6 /48) for one office or carrier-grade NAT
    # behind many addresses, or one renter of many; and for everyone together.
    registration_client_limit: int = Field(20, ge=1)
    registration_client_window_s: int = Field(3600, ge=1)
    registration_network_limit: int = Field(60, ge=1)
    registration_network_window_s: int = Field(3600, ge=1)
    registration_overall_limit: int = Field(120, ge=1)
    registration_overall_window_s: int = Field(60, ge=1)
    argon2_time_cost: int = Field(RFC_9106_LOW_MEMORY.time_cost, ge=1)
    argon2_memory_cost_kib: int = Field(RFC_9106_LOW_MEMORY.memory_cost, ge=8)
    argon2_parallelism: int = Field(RFC_9106_LOW_MEMORY.parallelism, ge=1)
    password_hashing_threads: int = Field(1, ge=1, le=64)
    password_hashing_niceness: int = Field(10, ge=0, le=19)
    # The password queue (admission.py): how long a login or a registration may wait for its hash, and how
    # many may wait at once; beyond either, 503 with Retry-After.
    login_wait_max_s: float = Field(5.0, gt=0)
    login_queue_max: int = Field(48, ge=1)
    registration_wait_max_s: float = Field(10.0, gt=0)
    registration_queue_max: int = Field(64, ge=1)

    @model_validator(mode="after")
    def _argon2_memory_covers_lanes(self):
        if self.argon2_memory_cost_kib < 8 * self.argon2_parallelism:
            raise ValueError("argon2 needs at least 8 KiB of memory per lane of parallelism")
        return self

    @model_validator(mode="after")
    def _backoff_is_bounded(self):
        if self.login_backoff_max_s < self.login_backoff_base_s:
            raise ValueError("the longest login backoff must be at least its first step")
        return self

    @property
    def session_ttl(self) -> timedelta:
        return timedelta(days=self.session_ttl_days)

    @property
    def login_throttle(self) -> LoginThrottle:
        window, base, cap = (
            timedelta(seconds=s) for s in (self.login_window_s, self.login_backoff_base_s, self.login_backoff_max_s)
        )
        return LoginThrottle(
            per_pair=Backoff(self.login_pair_free_failures, window, base, cap),
            per_client=Backoff(self.login_client_free_failures, window, base, cap),
        )

    @property
    def known_client_for(self) -> timedelta:
        return timedelta(days=self.known_client_days)

    @property
    def registration_throttle(self) -> RegistrationThrottle:
        return RegistrationThrottle(
            per_client=ThrottleRule(
                self.registration_client_limit, timedelta(seconds=self.registration_client_window_s)
            ),
            per_network=ThrottleRule(
                self.registration_network_limit, timedelta(seconds=self.registration_network_window_s)
            ),
            overall=ThrottleRule(
                self.registration_overall_limit, timedelta(seconds=self.registration_overall_window_s)
            ),
        )

    @property
    def password_budgets(self) -> dict[Kind, Budget]:
        return {
            Kind.LOGIN: Budget(self.login_wait_max_s, self.login_queue_max),
            Kind.REGISTRATION: Budget(self.registration_wait_max_s, self.registration_queue_max),
        }


class AccountsSettings(ServiceSettings, AccountsPolicy, telegram_links.TelegramLinkPolicy):
    model_config = SettingsConfigDict(env_prefix="ACCOUNTS_", extra="ignore")

    service_name: str = "accounts"
    metrics_port: int = 9102
    # Most workers wait in the password queue (a green thread each, no database connection meanwhile).
    max_workers: int = Field(128, ge=1, le=200)

    @model_validator(mode="after")
    def _workers_outnumber_password_requests(self):
        # Each request in the password queue or hashing holds a worker: the others stay free for session checks.
        held = self.login_queue_max + self.registration_queue_max + self.password_hashing_threads
        if held + FREE_WORKERS > self.max_workers:
            raise ValueError(
                "ACCOUNTS_LOGIN_QUEUE_MAX + ACCOUNTS_REGISTRATION_QUEUE_MAX + ACCOUNTS_PASSWORD_HASHING_THREADS"
                f" must leave {FREE_WORKERS} of ACCOUNTS_MAX_WORKERS for everything else"
            )
        return self
