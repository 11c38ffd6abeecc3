"""Gateway settings, from GATEWAY_* variables (and the shared AMQP_URI)."""

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class GatewaySettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GATEWAY_", extra="ignore")

    amqp_uri: str = Field("amqp://guest:guest@127.0.0.1:5672/", validation_alias=AliasChoices("AMQP_URI"))
    log_level: str = Field("INFO", validation_alias=AliasChoices("LOG_LEVEL"))
    host: str = "127.0.0.1"
    port: int = 8000
    rpc_timeout_s: float = Field(5.0, gt=0)
    max_body_bytes: int = Field(64 * 1024, ge=1024)
    # Set to false only for local HTTP development; production is HTTPS.
    cookie_secure: bool = False
    # Trust X-Forwarded-For (only behind a proxy that sets it).
    trust_forwarded_for: bool = False
