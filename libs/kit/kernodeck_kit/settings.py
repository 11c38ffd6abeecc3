"""Settings read from the environment, validated at start.

Shared keys have no prefix (AMQP_URI, DATA_DIR, LOG_LEVEL); a service's own
keys carry its prefix (CATALOG_DATABASE_URL, CATALOG_METRICS_PORT...).

A running service reads them one way: the runner puts the model in the nameko
config under SETTINGS_KEY, and the kit's `Settings` dependency (or
`settings_of` in another extension) validates it once per container.
"""

import os
from pathlib import Path
from typing import Self
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SETTINGS_KEY = "SETTINGS"


def amqp_ssl(amqp_uri: str) -> dict | None:
    """kombu's TLS options for an amqps:// URI (None for amqp://): the broker's certificate checked against
    AMQP_CA_FILE (else the system's CAs) and its host's name. py-amqp given only ssl=True checks neither."""
    parts = urlsplit(amqp_uri)
    if parts.scheme != "amqps":
        return None
    context = {"cafile": os.environ.get("AMQP_CA_FILE") or None, "check_hostname": True}  # py-amqp: False unless said
    return {"context": context, "server_hostname": parts.hostname}


class BaseServiceSettings(BaseSettings):
    """What every service process reads: the broker, its database, logs and metrics."""

    model_config = SettingsConfigDict(extra="ignore")

    service_name: str
    amqp_uri: str = Field(
        "amqp://guest:guest@127.0.0.1:5672/",
        validation_alias=AliasChoices("AMQP_URI"),
    )
    data_dir: Path = Field(Path("var/data"), validation_alias=AliasChoices("DATA_DIR"))
    log_level: str = Field("INFO", validation_alias=AliasChoices("LOG_LEVEL"))
    database_url: str = ""
    metrics_port: int = 0
    metrics_host: str = "127.0.0.1"
    # Which events a consumer has applied is kept this long, then forgotten (hourly).
    processed_events_retention_days: float = Field(30, gt=0)
    # The broker users that the operator command (kernodeck-admin) runs as: its operator RPCs are believed
    # from these only (kernodeck_kit.operators). Comma-separated.
    operator_broker_users: str = Field("guest", validation_alias=AliasChoices("OPERATOR_BROKER_USERS"))
    # The CA that signed the broker's certificate, for amqps:// (production: TLS only); empty: the system's CAs.
    amqp_ca_file: str = Field("", validation_alias=AliasChoices("AMQP_CA_FILE"))
    # The operator command's own broker user (kernodeck-admin's RPCs and dead letters); empty: AMQP_URI's.
    operator_amqp_uri: str = Field("", validation_alias=AliasChoices("OPERATOR_AMQP_URI"))

    @field_validator("amqp_uri", "operator_amqp_uri")
    @classmethod
    def _amqp_scheme(cls, value: str) -> str:
        if value and not value.startswith(("amqp://", "amqps://", "pyamqp://")):
            raise ValueError("AMQP_URI must start with amqp://, amqps:// or pyamqp://")
        return value

    @field_validator("log_level")
    @classmethod
    def _level(cls, value: str) -> str:
        level = value.upper()
        if level not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
            raise ValueError("LOG_LEVEL must be DEBUG, INFO, WARNING or ERROR")
        return level

    def operator_broker_user_set(self) -> frozenset[str]:
        return frozenset(user.strip() for user in self.operator_broker_users.split(",") if user.strip())

    def resolved_database_url(self) -> str:
        """The configured URL, or one SQLite file per service under DATA_DIR."""
        if self.database_url:
            return self.database_url
        self.data_dir.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{(self.data_dir / f'{self.service_name}.db').resolve()}"


class ServiceSettings(BaseServiceSettings):
    """A nameko service: its worker pool and its outbox relay too."""

    max_workers: int = Field(10, ge=1, le=200)
    outbox_relay_interval_s: float = Field(2.0, gt=0)
    # Published events are kept this long (for inspection), then removed.
    outbox_retention_days: float = Field(7, gt=0)
    # An event whose handler fails this many times (for a reason other than a dependency away) is set aside
    # in `<service>.dead-letters`.
    event_max_deliveries: int = Field(5, ge=1, le=100)

    def nameko_config(self) -> dict:
        return {
            "AMQP_URI": self.amqp_uri,
            "AMQP_SSL": amqp_ssl(self.amqp_uri),
            "max_workers": self.max_workers,
            "serializer": "json",
            SETTINGS_KEY: self.model_dump(mode="json"),
        }

    @classmethod
    def from_nameko_config(cls, config: dict) -> Self:
        """The settings `nameko_config()` carried (validated again: the config may come from anywhere)."""
        return cls.model_validate(config.get(SETTINGS_KEY, {}))
