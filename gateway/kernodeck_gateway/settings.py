"""Gateway settings, from GATEWAY_* variables (and the shared AMQP_URI)."""

from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import Annotated

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


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
    # The proxies in front of the gateway (addresses or networks, comma-separated): behind them the client
    # is the right-most X-Forwarded-For hop outside this list. Empty: the TCP peer is the client.
    trusted_proxies: Annotated[tuple[IPv4Network | IPv6Network, ...], NoDecode] = ()

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _split(cls, value):
        if isinstance(value, str):
            return tuple(ip_network(part.strip(), strict=False) for part in value.split(",") if part.strip())
        return value
