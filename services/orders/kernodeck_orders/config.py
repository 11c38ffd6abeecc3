"""Settings (ORDERS_*), validated at start."""

from datetime import timedelta

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from kernodeck_kit.settings import ServiceSettings
from kernodeck_orders.domain import OrderLimits


class OrdersSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="ORDERS_", extra="ignore")

    service_name: str = "orders"
    metrics_port: int = 9103
    unpaid_ttl_minutes: int = Field(1440, ge=1)
    sweep_interval_s: float = Field(60.0, gt=0)
    # Per account: orders awaiting payment at once (a few configurations side by side), and orders created per
    # sliding window, so that unpaid orders cannot be piled up to hold GPUs.
    unpaid_per_account: int = Field(5, ge=1)
    created_per_window: int = Field(20, ge=1)
    created_window_minutes: int = Field(60, ge=1)

    @property
    def order_limits(self) -> OrderLimits:
        return OrderLimits(
            self.unpaid_per_account, self.created_per_window, timedelta(minutes=self.created_window_minutes)
        )

    @property
    def unpaid_ttl(self) -> timedelta:
        return timedelta(minutes=self.unpaid_ttl_minutes)
