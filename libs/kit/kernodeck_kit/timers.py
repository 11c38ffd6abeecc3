"""A nameko timer whose interval comes from the container config, so it can be a setting."""

from nameko.timer import Timer


class ConfiguredTimer(Timer):
    def __init__(self, config_key: str, eager: bool = False, **kwargs):
        self.config_key = config_key
        super().__init__(interval=None, eager=eager, **kwargs)

    def setup(self):
        self.interval = float(self.container.config[self.config_key])


configured_timer = ConfiguredTimer.decorator
