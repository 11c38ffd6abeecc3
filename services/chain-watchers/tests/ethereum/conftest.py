"""A real anvil with the devnet's tokens and contracts, shared by a test module; helpers to shape blocks."""

import secrets

import pytest

from infra.devnet.nodes import AnvilNode
from infra.devnet.tokens import deploy, deploy_tokens
from kernodeck_watchers.chains.ethereum import EthereumClient


@pytest.fixture(scope="module")
def anvil(devnet_installed, tmp_path_factory):
    with AnvilNode(tmp_path_factory.mktemp("anvil")) as node:
        yield node


@pytest.fixture(scope="module")
def tokens(anvil):
    return deploy_tokens(anvil)


@pytest.fixture(scope="module")
def forwarder(anvil):
    return deploy(anvil, "Forwarder")


@pytest.fixture
def client(anvil):
    return EthereumClient(anvil.rpc_url)


@pytest.fixture
def node_url(anvil) -> str:
    return anvil.rpc_url


@pytest.fixture
def node_height(anvil):
    """() -> the node's tip."""
    return lambda: int(anvil.rpc("eth_blockNumber"), 16)


@pytest.fixture
def settings_on(watcher_database, quick_settings):
    """`settings_on(url, **fields)`: a watcher's settings for tests on the node at `url` (anvil's, a proxy's)."""
    return lambda url, **fields: quick_settings("ethereum", watcher_database, ethereum_rpc_url=url, **fields)


@pytest.fixture
def new_address():
    """A fresh address nobody has used: lowercase 0x hex."""
    return lambda: "0x" + secrets.token_hex(20)


@pytest.fixture
def one_block(anvil):
    """`with one_block() as hashes: hashes.append(send(...))` mines those transactions in one block and
    leaves their receipts in `hashes.receipts`."""
    return anvil.one_block


@pytest.fixture
def ref_of(client):
    """The BlockRef of the block a receipt is in."""
    return lambda receipt: client.block(int(receipt["blockNumber"], 16))
