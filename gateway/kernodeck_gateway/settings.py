"""Gateway settings, from GATEWAY_* variables (and the shared AMQP_URI)."""

from ipaddress import IPv4Network, IPv6Network, ip_network
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

Exposure = Literal["public", "internal", "off"]
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
NO_PROXY = "none"


class GatewaySettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GATEWAY_", extra="ignore")

    amqp_uri: str = Field("amqp://guest:guest@127.0.0.1:5672/", validation_alias=AliasChoices("AMQP_URI"))
    log_level: str = Field("INFO", validation_alias=AliasChoices("LOG_LEVEL"))
    host: str = "127.0.0.1"
    port: int = 8000
    rpc_timeout_s: float = Field(5.0, gt=0)
    # Registration and login: accounts lets them wait their turn for a password hash (up to 10 s for a
    # registration by default), so the gateway waits longer than for other calls rather than answer 503
    # while the registration goes on. Keep it above ACCOUNTS_REGISTRATION_WAIT_MAX_S and
    # ACCOUNTS_LOGIN_WAIT_MAX_S plus a few hashes.
    password_rpc_timeout_s: float = Field(20.0, gt=0)
    max_body_bytes: int = Field(64 * 1024, ge=1024)
    # The session cookie is Secure, named __Host-kd_session. False (plain HTTP, kd_session) only for a
    # gateway on a loopback address, as `make run` and the test stacks set it.
    cookie_secure: bool = True
    # Required, so that a gateway behind a proxy never counts every client as the proxy unnoticed: "none"
    # (clients connect to the gateway itself: the TCP peer is the client, X-Forwarded-For is ignored) or the
    # proxies in front of it (addresses or networks, comma-separated): behind them the client is the
    # right-most X-Forwarded-For hop outside this list.
    trusted_proxies: Annotated[tuple[IPv4Network | IPv6Network, ...] | None, NoDecode] = None
    # The built web frontend served at / (`make web` builds it there).
    web_dir: Path = Path(__file__).resolve().parents[2] / "web" / "dist"

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _split(cls, value):
        if isinstance(value, str):
            if value.strip().lower() == NO_PROXY:
                return ()
            networks = tuple(ip_network(part.strip(), strict=False) for part in value.split(",") if part.strip())
            return networks or None  # an empty list says nothing: as unset
        return value

    # /metrics and the API docs (/api/v1/docs, /api/v1/openapi.json): on the public port, on the internal
    # port only (internal_host:internal_port, for Prometheus and operators), or not at all.
    metrics: Exposure = "public"
    api_docs: Exposure = "public"
    internal_host: str = "127.0.0.1"
    internal_port: int = Field(0, ge=0, le=65535)

    @model_validator(mode="after")
    def _coherent(self):
        if self.trusted_proxies is None:
            raise ValueError(
                f"GATEWAY_TRUSTED_PROXIES must be set: {NO_PROXY!r} when clients connect to the gateway itself,"
                " else the addresses or networks of the proxies in front of it"
            )
        if not self.cookie_secure and self.host not in LOOPBACK:
            raise ValueError("GATEWAY_COOKIE_SECURE=false is for a gateway on a loopback address only")
        if "internal" in (self.metrics, self.api_docs) and not self.internal_port:
            raise ValueError("GATEWAY_INTERNAL_PORT is needed to serve metrics or docs internally")
        return self
