"""The `rules` dependency: password hashing, session lifetime and login throttle."""

from nameko.extensions import DependencyProvider

from kernodeck_accounts.config import AccountsSettings
from kernodeck_accounts.use_cases import Rules, rules_for
from kernodeck_kit.transport.dependencies import settings_of


class AccountRules(DependencyProvider):
    """Built once per container from the account policy of the settings (defaults when absent)."""

    def setup(self):
        self.rules = rules_for(settings_of(self.container, AccountsSettings))

    def get_dependency(self, worker_ctx) -> Rules:
        return self.rules
