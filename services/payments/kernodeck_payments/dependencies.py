"""nameko dependency providers of the payments service."""

from nameko.extensions import DependencyProvider

from kernodeck_payments.availability import rate_source_names
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.rates.sources import build_sources


class Settings(DependencyProvider):
    """The validated PAYMENTS_* settings, built once from the container config."""

    def setup(self):
        self.settings = PaymentsSettings.model_validate(self.container.config["PAYMENTS"])

    def get_dependency(self, worker_ctx) -> PaymentsSettings:
        return self.settings


class RateSources(DependencyProvider):
    def setup(self):
        settings = PaymentsSettings.model_validate(self.container.config["PAYMENTS"])
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
