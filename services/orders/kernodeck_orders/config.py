"""Settings, and the keys under which they reach the service's nameko config."""

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from kernodeck_kit.settings import ServiceSettings

UNPAID_TTL_MINUTES = "UNPAID_TTL_MINUTES"
SWEEP_INTERVAL_S = "SWEEP_INTERVAL_S"


class OrdersSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="ORDERS_", extra="ignore")

    service_name: str = "orders"
    metrics_port: int = 9103
    unpaid_ttl_minutes: int = Field(1440, ge=1)
    sweep_interval_s: float = Field(60.0, gt=0)

    def nameko_config(self) -> dict:
        return {
            **super().nameko_config(),
            UNPAID_TTL_MINUTES: self.unpaid_ttl_minutes,
            SWEEP_INTERVAL_S: self.sweep_interval_s,
        }
