"""A nameko timer whose interval is one of the service's settings."""

from nameko.timer import Timer

from kernodeck_kit.settings import ServiceSettings
from kernodeck_kit.transport.dependencies import settings_of


class ConfiguredTimer(Timer):
    def __init__(self, settings_cls: type[ServiceSettings], field: str, eager: bool = False, **kwargs):
        self.settings_cls = settings_cls
        self.field = field
        super().__init__(interval=None, eager=eager, **kwargs)

    def setup(self):
        self.interval = float(getattr(settings_of(self.container, self.settings_cls), self.field))


configured_timer = ConfiguredTimer.decorator
