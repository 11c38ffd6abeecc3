"""nameko dependency providers of the provisioning service: its settings and tools, and the clock."""

from dataclasses import dataclass

from nameko.extensions import DependencyProvider

from kernodeck_kit.nameko_deps import settings_of
from kernodeck_kit.types import utcnow
from kernodeck_provisioning.config import ProvisioningSettings
from kernodeck_provisioning.crypto import SecretBox
from kernodeck_provisioning.hosts import SshHosts


@dataclass(frozen=True)
class Tools:
    settings: ProvisioningSettings
    secrets: SecretBox
    hosts: SshHosts


class ProvisioningTools(DependencyProvider):
    def setup(self):
        settings = settings_of(self.container, ProvisioningSettings)
        self.tools = Tools(
            settings=settings,
            secrets=SecretBox(settings.secret_key),
            hosts=SshHosts(
                settings.ssh_key_path,
                settings.ssh_user,
                settings.ssh_connect_timeout_s,
                settings.ssh_command_timeout_s,
                accept_gpu_double=settings.accept_gpu_double,
            ),
        )

    def get_dependency(self, worker_ctx) -> Tools:
        return self.tools


class Clock(DependencyProvider):
    """`self.clock()` is the time; tests give the container another clock to move a term to its end."""

    def __init__(self, now=utcnow):
        self.now = now

    def get_dependency(self, worker_ctx):
        return self.now
