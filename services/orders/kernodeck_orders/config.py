"""Settings (ORDERS_*), validated at start."""

from datetime import timedelta

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from kernodeck_kit.settings import ServiceSettings


class OrdersSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="ORDERS_", extra="ignore")

    service_name: str = "orders"
    metrics_port: int = 9103
    unpaid_ttl_minutes: int = Field(1440, ge=1)
    sweep_interval_s: float = Field(60.0, gt=0)

    @property
    def unpaid_ttl(self) -> timedelta:
        return timedelta(minutes=self.unpaid_ttl_minutes)
