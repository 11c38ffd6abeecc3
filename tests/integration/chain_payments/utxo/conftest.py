"""Bitcoin and Litecoin: the watchers' regtest nodes (their suite's utxo fixtures), payments on regtest
settings, with the real catalog and orders."""

import pytest

from kernodeck_payments.config import PaymentsSettings
from tests.integration.chain_payments.conftest import watcher_fixtures

_utxo = watcher_fixtures("utxo/conftest.py")
regtest = _utxo.regtest
node = _utxo.node
node_url = _utxo.node_url
settings_on = _utxo.settings_on
watcher_settings = _utxo.watcher_settings

# A BIP84 testnet account key (vpub) from a public test mnemonic: never for real money.
REGTEST_KEY = (
    "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"
)
ASSETS = {"bitcoin": "BTC", "litecoin": "LTC"}


@pytest.fixture
def method(node) -> tuple[str, str]:
    return ASSETS[node.network], node.network


@pytest.fixture
def payments_settings(databases, rates_file, watcher_settings) -> PaymentsSettings:
    return PaymentsSettings(
        database_url=databases["payments"],
        bitcoin_chain="regtest",
        litecoin_chain="regtest",
        bitcoin_xpub=REGTEST_KEY,
        litecoin_xpub=REGTEST_KEY,
        bitcoin_confirmations=watcher_settings.bitcoin_confirmations,
        litecoin_confirmations=watcher_settings.litecoin_confirmations,
        rate_sources="file",
        rate_min_sources=1,
        rate_file=rates_file,
        rate_refresh_s=3600,
        sweep_interval_s=3600,
    )
