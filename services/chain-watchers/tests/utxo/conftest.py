"""Bitcoin and Litecoin watchers against real regtest nodes, on the real broker and PostgreSQL.

Every test here runs once per network (`node` is parametrized). Tests reach
the node driver, the event tap and the watcher's containers through fixtures
(the ones every chain shares are in ../conftest.py).
"""

from decimal import Decimal

import pytest
from nameko.standalone.events import event_dispatcher

from infra.devnet.nodes import BitcoinNode, LitecoinNode
from kernodeck_contracts.events import PaymentReported
from kernodeck_watchers.config import WatcherSettings

NODES = {"bitcoin": BitcoinNode, "litecoin": LitecoinNode}
# Litecoin Core refuses replacements (BIP 125) unless told otherwise; the test node accepts them, as a
# miner that does would, so that a replaced payment can be seen leaving the mempool.
NODE_ARGS = {"bitcoin": (), "litecoin": ("-mempoolreplacement=1",)}
CONFIRMATIONS = 2
COIN = 10**8


def coins(base_units: int) -> str:
    return f"{base_units // COIN}.{base_units % COIN:08d}"


class RegtestNode:
    """A regtest node under test: pay, mine, replace, reorganise, stop and restart on the same port and datadir."""

    def __init__(self, network: str, node):
        self.network = network
        self.node = node

    def rpc(self, method: str, *params):
        return self.node.rpc(method, *params)

    def new_address(self) -> str:
        return self.rpc("getnewaddress", "", "bech32")

    def pay(self, address: str, base_units: int) -> str:
        """Send from the node's wallet, signalling replaceability (BIP 125); the txid."""
        return self.rpc("sendtoaddress", address, coins(base_units), "", "", False, True)

    def mine(self, blocks: int = 1) -> list[str]:
        return self.node.mine(blocks)

    def height(self) -> int:
        return self.rpc("getblockcount")

    def output_index(self, txid: str, address: str) -> int:
        tx = self.rpc("getrawtransaction", txid, True)
        for out in tx["vout"]:
            script = out["scriptPubKey"]
            if address in (script.get("address"), *script.get("addresses", ())):
                return out["n"]
        raise AssertionError(f"{txid} pays nothing to {address}")

    def bump(self, txid: str) -> str:
        """Replace `txid` by the same payment with a higher fee (RBF); the replacement's txid."""
        return self.rpc("bumpfee", txid)["txid"]

    def double_spend(self, txid: str) -> str:
        """Replace `txid` (in the mempool) by a transaction spending its inputs back to the wallet only."""
        tx = self.rpc("getrawtransaction", txid, True)
        fee = -Decimal(str(self.rpc("gettransaction", txid)["fee"]))
        spent = sum(Decimal(str(out["value"])) for out in tx["vout"]) + fee
        inputs = [{"txid": vin["txid"], "vout": vin["vout"], "sequence": 0xFFFFFFFD} for vin in tx["vin"]]
        raw = self.rpc("createrawtransaction", inputs, {self.new_address(): str(spent - 3 * fee)})
        return self.rpc("sendrawtransaction", self.rpc("signrawtransactionwithwallet", raw)["hex"])

    def invalidate(self, block_hash: str) -> None:
        self.rpc("invalidateblock", block_hash)

    def stop(self) -> None:
        self.node.stop()

    def restart(self) -> None:
        """Start again on the same datadir, RPC port and ZMQ port (the watcher's settings stay valid)."""
        self.node.restart()


@pytest.fixture(scope="session", params=list(NODES))
def regtest(request, tmp_path_factory):
    cls = NODES[request.param]
    if not cls.installed():
        pytest.skip(f"{request.param} node is not installed: run {cls.install_hint}")
    # A workdir of our own: stopping the node for a test must not delete its chain. 200 blocks: a
    # hundred spendable coinbases, as wallets do not spend the change of unconfirmed replaceable payments.
    node = cls(tmp_path_factory.mktemp(request.param), blocks=200, extra_args=NODE_ARGS[request.param])
    node.start()
    yield RegtestNode(request.param, node)
    node.stop()


@pytest.fixture
def node(regtest):
    if not regtest.node.running:
        regtest.restart()  # a test that stopped it failed before restarting it
    return regtest


@pytest.fixture
def node_url(node) -> str:
    return node.node.rpc_url


@pytest.fixture
def node_height(node):
    return node.height


@pytest.fixture
def new_address(node):
    return node.new_address


@pytest.fixture
def settings_on(node, watcher_database, quick_settings):
    """`settings_on(url)`: the watcher's settings for tests on `node`, its RPC at `url` (the node's, a proxy's), its
    block announcements straight from the node (ZMQ)."""

    def settings(url: str) -> WatcherSettings:
        network, raw = node.network, node.node
        return quick_settings(
            network,
            watcher_database,
            **{
                f"{network}_rpc_url": url,
                f"{network}_rpc_user": raw.rpcuser,
                f"{network}_rpc_password": raw.rpcpassword,
                f"{network}_zmq_url": raw.zmq_hashblock_url or "",
                f"{network}_confirmations": CONFIRMATIONS,
                f"{network}_lag_blocks": 2,
            },
        )

    return settings


@pytest.fixture
def watcher_settings(node_url, settings_on) -> WatcherSettings:
    return settings_on(node_url)


@pytest.fixture
def watching(fake_payments, start_watcher, announce, watcher_db, wait):
    """`watching(node)` -> a fresh address of `node` that the running watcher has been told about."""
    start_watcher()

    def new_watched_address(node) -> str:
        address = node.new_address()
        announce(address)
        wait(lambda: address in watcher_db.watched(), what="the watcher to store the address")
        return address

    return new_watched_address


@pytest.fixture
def report(rabbit_config, node):
    """`report(address)` publishes payments' payment_reported ("J'ai payé") for it."""
    dispatch = event_dispatcher({**rabbit_config, "serializer": "json"})

    def publish(address: str) -> None:
        event = PaymentReported(payment_id="p", order_id=None, account_id="a", network=node.network, address=address)
        dispatch(event.source, event.type, event.to_message())

    return publish
