"""The deposit addresses the service hands out are real ones: local regtest nodes accept and pay them.

bitcoind and litecoind (regtest) validate the BIP84 addresses, derive the
very same ones from the account key with their own descriptor code, and their
wallets pay them; anvil credits an ETH deposit address. A node's tests are
skipped only when its binary is not installed (infra/devnet/install.sh).
"""

import sys
from decimal import Decimal
from pathlib import Path

import pytest

from kernodeck_chains.base58 import b58check_decode, b58check_encode
from kernodeck_payments.config import PaymentsSettings

try:
    from infra.devnet import nodes
except ImportError:  # run from elsewhere: import by path
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from infra.devnet import nodes

# Starting a node forks (subprocess with preexec_fn): eventlet warns, and the child execs the node at once.
pytestmark = pytest.mark.filterwarnings("ignore:Using fork:DeprecationWarning")

ACC = "acc1"
# BIP84 account key m/84'/1'/0' of the "abandon ... about" test mnemonic (SLIP-132 vpub), for both regtest chains.
REGTEST_KEY = (
    "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"
)
TPUB_VERSION = bytes.fromhex("043587cf")  # the same key as Bitcoin Core's descriptors (and Litecoin's) spell it


@pytest.fixture
def settings(settings):
    """The service on regtest: BTC and LTC addresses for local nodes, ETH payment URIs for anvil's chain."""
    changes = {
        "bitcoin_chain": "regtest",
        "litecoin_chain": "regtest",
        "bitcoin_xpub": REGTEST_KEY,
        "litecoin_xpub": REGTEST_KEY,
        "ethereum_chain_id": nodes.AnvilNode.chain_id,
    }
    return PaymentsSettings.model_validate({**settings.model_dump(), **changes})


def _started(cls, tmp_path_factory, **kwargs):
    if not cls.installed():
        pytest.skip(f"{cls.__name__}: binary not installed (run {cls.install_hint})")
    return cls(tmp_path_factory.mktemp(cls.name), **kwargs)


@pytest.fixture(scope="module")
def bitcoind(tmp_path_factory):
    with _started(nodes.BitcoinNode, tmp_path_factory, zmq=False) as node:
        yield node


@pytest.fixture(scope="module")
def litecoind(tmp_path_factory):
    with _started(nodes.LitecoinNode, tmp_path_factory, zmq=False) as node:
        yield node


@pytest.fixture(scope="module")
def anvil(tmp_path_factory):
    with _started(nodes.AnvilNode, tmp_path_factory) as node:
        yield node


def as_tpub(vpub: str) -> str:
    return b58check_encode(TPUB_VERSION + b58check_decode(vpub)[4:])


def paid_outputs(node, tx: str, address: str) -> list[Decimal]:
    raw = node.rpc("getrawtransaction", tx, True)
    return [
        Decimal(str(out["value"]))
        for out in raw["vout"]
        if out["scriptPubKey"].get("address") == address or address in out["scriptPubKey"].get("addresses", [])
    ]


@pytest.mark.parametrize(
    ("asset", "network", "node_fixture", "hrp"),
    [("BTC", "bitcoin", "bitcoind", "bcrt"), ("LTC", "litecoin", "litecoind", "rltc")],
)
def test_a_utxo_node_validates_derives_and_pays_the_deposit_addresses(
    request, payments_ready, payments, new_order, asset, network, node_fixture, hrp
):
    node = request.getfixturevalue(node_fixture)
    payment = payments.create_order_payment(ACC, new_order(ACC)["id"], asset, network)
    second = payments.create_order_payment(ACC, new_order(ACC)["id"], asset, network)
    addresses = [payment["address"], second["address"]]
    assert all(address.startswith(f"{hrp}1q") for address in addresses)

    for address in addresses:
        info = node.rpc("validateaddress", address)
        assert (info["isvalid"], info["iswitness"], info["witness_version"]) == (True, True, 0), info
    # The node derives the same addresses from the account key's external chain (m/84'/1'/0'/0/i).
    descriptor = f"wpkh({as_tpub(REGTEST_KEY)}/0/*)"
    checksum = node.rpc("getdescriptorinfo", descriptor)["checksum"]
    assert node.rpc("deriveaddresses", f"{descriptor}#{checksum}", [0, 1]) == addresses

    # The node's wallet pays the amount asked, and the block holds it on the deposit address.
    tx = node.rpc("sendtoaddress", payment["address"], payment["amount"])
    node.mine(1)
    assert paid_outputs(node, tx, payment["address"]) == [Decimal(payment["amount"])]
    assert node.rpc("gettransaction", tx)["confirmations"] == 1
    assert int(Decimal(payment["amount"]) * 10**8) == payment["amount_base_units"]


def test_anvil_credits_an_eth_deposit_address_derived_from_the_account_key(anvil, payments_ready, payments, new_order):
    order = new_order(ACC)
    payment = payments.create_order_payment(ACC, order["id"], "ETH", "ethereum")
    address = payment["address"]
    assert address == "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"  # m/44'/60'/0'/0/0 of the test mnemonic
    assert payment["uri"] == f"ethereum:{address}@31337?value={payment['amount_base_units']}"
    assert anvil.rpc("eth_getBalance", address, "latest") == "0x0"

    tx = anvil.rpc(
        "eth_sendTransaction", {"from": anvil.accounts[0], "to": address, "value": hex(payment["amount_base_units"])}
    )
    receipt = anvil.wait_receipt(tx)

    assert (receipt["status"], receipt["to"].lower()) == ("0x1", address.lower())
    assert int(anvil.rpc("eth_getBalance", address, "latest"), 16) == payment["amount_base_units"]
