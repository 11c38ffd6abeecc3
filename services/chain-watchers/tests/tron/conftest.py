"""A TronDouble (a real anvil behind it) shared by a test module, its tokens, fresh accounts and a client."""

import coincurve
import pytest

from infra.devnet.tron_double import TronDouble
from kernodeck_chains.addresses import tron_address
from kernodeck_watchers.chains.tron import TronClient


@pytest.fixture(scope="module")
def double(devnet_installed):
    with TronDouble(solidify_after=3) as node:
        yield node


@pytest.fixture(scope="module")
def usdt(double):
    return double.deploy_trc20("USDT", 6, 10**15)


@pytest.fixture(scope="module")
def fake_usdt(double):
    """Another contract with USDT's symbol and decimals."""
    return double.deploy_trc20("USDT", 6, 10**15)


@pytest.fixture
def node_url(double) -> str:
    return double.url


@pytest.fixture
def node_height(double):
    """() -> the double's head."""
    return lambda: double.post("/wallet/getblock", {"detail": False})["block_header"]["raw_data"]["number"]


@pytest.fixture
def settings_on(watcher_database, quick_settings):
    """`settings_on(url, **fields)`: a watcher's settings for tests on the node at `url` (the double's, a proxy's)."""
    return lambda url, **fields: quick_settings("tron", watcher_database, tron_url=url, **fields)


@pytest.fixture
def new_account():
    """() -> (base58 address, private key hex) of a key nobody has used."""

    def make():
        key = coincurve.PrivateKey()
        return tron_address(key.public_key.format(compressed=False)), key.secret.hex()

    return make


@pytest.fixture
def new_address(new_account):
    return lambda: new_account()[0]


@pytest.fixture
def latest(double):
    return TronClient(double.url)
