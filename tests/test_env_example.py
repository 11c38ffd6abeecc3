""".env.example names every setting of every settings class, and nothing else."""

import re

from pydantic import AliasChoices
from pydantic_settings import BaseSettings

from infra.local.run import RunSettings
from infra.local.stack import ROOT
from kernodeck_accounts.config import AccountsSettings
from kernodeck_catalog.config import CatalogSettings
from kernodeck_gateway.settings import GatewaySettings
from kernodeck_notify.config import NotifySettings
from kernodeck_orders.config import OrdersSettings
from kernodeck_payments.config import PaymentsSettings
from kernodeck_provisioning.config import ProvisioningSettings
from kernodeck_support.config import SupportSettings
from kernodeck_watchers.config import WatcherSettings

SETTINGS = (
    RunSettings,
    CatalogSettings,
    AccountsSettings,
    OrdersSettings,
    PaymentsSettings,
    ProvisioningSettings,
    SupportSettings,
    WatcherSettings,
    NotifySettings,
    GatewaySettings,
)
# Fields the code sets, never the environment: the service's name, and the watcher's --network.
NOT_SETTINGS = {"service_name", "network"}


def env_keys(settings: type[BaseSettings]) -> set[str]:
    prefix = settings.model_config["env_prefix"]
    keys = set()
    for name, field in settings.model_fields.items():
        if isinstance(field.validation_alias, AliasChoices):  # shared keys: AMQP_URI, DATA_DIR, LOG_LEVEL
            keys.update(field.validation_alias.choices)
        elif name not in NOT_SETTINGS:
            keys.add(f"{prefix}{name}".upper())
    return keys


def test_env_example_lists_exactly_the_settings():
    text = (ROOT / ".env.example").read_text()
    listed = re.findall(r"^#?([A-Z][A-Z0-9_]*)=", text, flags=re.MULTILINE)
    expected = set().union(*map(env_keys, SETTINGS))

    assert len(listed) == len(set(listed)), "a setting is listed twice"
    assert expected - set(listed) == set(), "settings missing from .env.example"
    assert set(listed) - expected == set(), ".env.example names settings that do not exist"
