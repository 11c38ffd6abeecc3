"""Settings (SUPPORT_*), validated at start."""

from pydantic_settings import SettingsConfigDict

from kernodeck_kit.settings import ServiceSettings


class SupportSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="SUPPORT_", extra="ignore")

    service_name: str = "support"
    metrics_port: int = 9107
