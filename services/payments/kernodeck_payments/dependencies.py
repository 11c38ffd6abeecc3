"""The rate sources, built once per container from the payments settings."""

from nameko.extensions import DependencyProvider

from kernodeck_kit.transport.dependencies import settings_of
from kernodeck_payments.availability import rate_source_names
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.rates.sources import build_sources


class RateSources(DependencyProvider):
    def setup(self):
        settings = settings_of(self.container, PaymentsSettings)
        urls = {"kraken": settings.kraken_url, "coingecko": settings.coingecko_url, "coinbase": settings.coinbase_url}
        names = rate_source_names(settings)
        self.sources = build_sources(
            names,
            {name: url for name, url in urls.items() if name in names},
            settings.rate_file,
            settings.rate_timeout_s,
        )

    def get_dependency(self, worker_ctx):
        return self.sources
