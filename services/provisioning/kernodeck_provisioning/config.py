"""Settings (PROVISIONING_*), validated at start."""

from typing import Literal

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict

from kernodeck_kit.settings import ServiceSettings
from kernodeck_provisioning.domain import HoldLimits


class ProvisioningSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="PROVISIONING_", extra="ignore")

    service_name: str = "provisioning"
    metrics_port: int = 9105
    # "development" is for make run and the tests only: it alone may accept the GPU double.
    environment: Literal["production", "development"] = "production"
    # Fernet key (32 url-safe base64 bytes) that seals access secrets at rest; required.
    secret_key: str = ""
    # The private key provisioning logs into nodes with, as `ssh_user` (root: it creates the rentals' users).
    ssh_key_path: str = ""
    ssh_user: str = "root"
    ssh_connect_timeout_s: float = Field(10.0, gt=0)
    ssh_command_timeout_s: float = Field(900.0, gt=0)
    # Nodes whose readiness check reports the test GPU double are refused unless this is true.
    accept_gpu_double: bool = False
    # Holds, end warnings and ends are looked at this often; delivery leases last this long.
    sweep_interval_s: float = Field(5.0, gt=0)
    delivery_lease_s: float = Field(1800.0, gt=0)
    # Deliveries run beside the workers, this many at once; more wait for the sweep, so that long readiness
    # checks never take the workers that answer holds, keys and access.
    delivery_concurrency: int = Field(8, ge=1, le=100)
    # The catalog's models are copied and every model's capacity announced this often.
    capacity_sync_s: float = Field(60.0, gt=0)
    # Unpaid holds: the GPUs one account may hold over all its unpaid orders (a few configurations side by side),
    # and the share (percent) of a model's GPUs in service that accounts yet to pay a first order hold together.
    held_gpus_per_account: int = Field(16, ge=1)
    newcomers_held_percent: int = Field(50, ge=0, le=100)

    @property
    def hold_limits(self) -> HoldLimits:
        return HoldLimits(self.held_gpus_per_account, self.newcomers_held_percent)

    @model_validator(mode="after")
    def _safe(self):
        if self.accept_gpu_double and self.environment == "production":
            raise ValueError("PROVISIONING_ACCEPT_GPU_DOUBLE is for development only: production delivers real GPUs")
        if not self.secret_key:
            raise ValueError("PROVISIONING_SECRET_KEY is required: it seals the access secrets")
        if not self.ssh_key_path:
            raise ValueError("PROVISIONING_SSH_KEY_PATH is required: the key provisioning logs into nodes with")
        return self
