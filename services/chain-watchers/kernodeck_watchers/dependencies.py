"""The nameko dependency that holds the process's WatcherRuntime."""

from nameko.extensions import DependencyProvider

from kernodeck_kit.transport.dependencies import settings_of
from kernodeck_watchers.clients import build_client
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.instrumented import InstrumentedClient
from kernodeck_watchers.leader import leadership
from kernodeck_watchers.runtime import WatcherRuntime


class Watcher(DependencyProvider):
    def setup(self):
        settings = settings_of(self.container, WatcherSettings)
        if self.container.service_name != settings.service_name:
            raise ValueError(f"{self.container.service_name} was given the settings of {settings.service_name}")
        client = InstrumentedClient(build_client(settings))
        self.runtime = WatcherRuntime(
            settings, client, leadership(self.container.config["DATABASE_URL"], settings.network)
        )

    def stop(self):
        self.runtime.close()

    def kill(self):
        self.runtime.close()

    def get_dependency(self, worker_ctx) -> WatcherRuntime:
        return self.runtime
