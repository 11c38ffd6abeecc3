"""The `rules` dependency: password hashing, session lifetime and login throttle."""

from dataclasses import dataclass
from datetime import timedelta

from nameko.extensions import DependencyProvider

from kernodeck_accounts.config import AccountsSettings
from kernodeck_accounts.domain import LoginThrottle
from kernodeck_accounts.passwords import Passwords
from kernodeck_kit.nameko_deps import settings_of


@dataclass(frozen=True)
class Rules:
    passwords: Passwords
    session_ttl: timedelta
    throttle: LoginThrottle


class AccountRules(DependencyProvider):
    """Built once per container from the account policy of the settings (defaults when absent)."""

    def setup(self):
        policy = settings_of(self.container, AccountsSettings)
        self.rules = Rules(
            passwords=Passwords(policy.argon2_time_cost, policy.argon2_memory_cost_kib, policy.argon2_parallelism),
            session_ttl=policy.session_ttl,
            throttle=policy.login_throttle,
        )

    def get_dependency(self, worker_ctx) -> Rules:
        return self.rules
