"""nameko dependency providers of the provisioning service: its settings and tools, its deliveries, the clock."""

import logging
from collections.abc import Callable
from dataclasses import dataclass

from eventlet.greenpool import GreenPool
from nameko.extensions import DependencyProvider

from kernodeck_kit.transport.dependencies import settings_of
from kernodeck_kit.types import utcnow
from kernodeck_provisioning.config import ProvisioningSettings
from kernodeck_provisioning.crypto import SecretBox
from kernodeck_provisioning.hosts import SshHosts

log = logging.getLogger(__name__)


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


class Deliveries(DependencyProvider):
    """Deliveries, and the other work on nodes (checks, reclaims of what a failed delivery left), in green
    threads of their own, `delivery_concurrency` at once, each under a key (an order id, `check:<node>`...).

    A delivery lasts minutes (SSH, preparation, the readiness check): run in the worker that saw the order
    paid, ten of them would take every worker, and holds, keys and access would stop answering. Its state
    is in the database (a delivery not taken, or whose lease lapsed, is due), so one not started here
    because all places are taken, or killed with the service, is started by the sweep later.
    """

    def setup(self):
        self.pool = GreenPool(settings_of(self.container, ProvisioningSettings).delivery_concurrency)
        self.running: set[str] = set()

    def stop(self):
        self.kill()

    def kill(self):
        for thread in list(self.pool.coroutines_running):
            thread.kill()

    def get_dependency(self, worker_ctx) -> Callable[[str, Callable[[str], None]], bool]:
        return self.offer

    def offer(self, order_id: str, deliver: Callable[[str], None]) -> bool:
        """Run `deliver(order_id)` beside the workers; False when it runs already or every place is taken."""
        if order_id in self.running or self.pool.free() == 0:
            return False
        self.running.add(order_id)
        self.pool.spawn_n(self._run, order_id, deliver)
        return True

    def _run(self, order_id: str, deliver: Callable[[str], None]) -> None:
        try:
            deliver(order_id)
        except Exception:
            log.exception(
                "a delivery failed; the sweep takes it up again once its lease lapses", extra={"order_id": order_id}
            )
        finally:
            self.running.discard(order_id)


class Clock(DependencyProvider):
    """`self.clock()` is the time; tests give the container another clock to move a term to its end."""

    def __init__(self, now=utcnow):
        self.now = now

    def get_dependency(self, worker_ctx):
        return self.now
