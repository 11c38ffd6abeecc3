"""Ethereum, Tron and Solana end to end: a real node (anvil, the Tron double on its own anvil, the Solana
double on LiteSVM) per network for the whole session, driven through the node's own API; the watcher and
the catalog, orders and payments services of ../conftest.py around it, payments on regtest settings.

Every test runs once per payment method (`method`: ETH and USDT on ethereum, TRX and USDT on tron, SOL on
solana); `chain` is that network's driver. A driver's `pay` puts the transfer in a block of its own that
the watcher can see (on Solana, at the `confirmed` commitment), so it has one confirmation; `mine` adds
blocks on top; `drop` replaces the newest block by one without the payment; `stop` and `restart` take the
node's API away and bring it back on the same port with the same chain (the doubles' chains can grow
meanwhile: `mine_while_stopped`).
"""

from datetime import UTC, datetime

import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey
from sqlmodel import Session

from infra.devnet.nodes import AnvilNode
from infra.devnet.solana_double import SolanaDouble
from infra.devnet.solana_double.ledger import LAMPORTS_PER_SOL
from infra.devnet.solana_double.wallet import Wallet
from infra.devnet.tokens import call_data, deploy, deploy_tokens, forward_eth, send, transfer_token
from infra.devnet.tron_double import TronDouble
from infra.devnet.tron_double.addresses import to_evm
from kernodeck_kit.db import make_engine
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.store.addresses import import_solana_addresses
from kernodeck_payments.store.tables import AddressCounter
from kernodeck_watchers.chains.ethereum import EthereumClient
from kernodeck_watchers.chains.solana import SolanaClient
from kernodeck_watchers.chains.tron import TronClient
from kernodeck_watchers.config import WatcherSettings

CONFIRMATIONS = 2
METHODS = [("ETH", "ethereum"), ("USDT", "ethereum"), ("TRX", "tron"), ("USDT", "tron"), ("SOL", "solana")]

# Account-level keys (BIP44 m/44'/60'/0' and m/44'/195'/0') of the public "abandon ... about" test mnemonic,
# as payments' own tests use them: never for real money.
ETHEREUM_XPUB = (
    "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
)
TRON_XPUB = (
    "xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd"
)


def in_payments_db(url: str, change) -> None:
    """`change(session)` on payments' database, committed."""
    engine = make_engine(url)
    try:
        with Session(engine) as session:
            change(session)
            session.commit()
    finally:
        engine.dispose()


class FreshAddresses:
    """Payments derives deposit addresses from an index it counts from 0 in its (emptied) database: each test
    starts the count further on, so that no test pays, or reads the balance of, an address another one used."""

    network: str
    addresses_per_test = 50
    _next_index = 0

    def seed_payments(self, url: str) -> None:
        self._next_index += self.addresses_per_test
        counter = AddressCounter(network=self.network, next_index=self._next_index)
        in_payments_db(url, lambda session: session.add(counter))


def method_id(method: tuple[str, str]) -> str:
    return f"{method[1]}-{method[0]}"


def balance_of_call(holder_evm: str) -> str:
    return call_data("balanceOf(address)", holder_evm)


class EthereumChain(FreshAddresses):
    """anvil (automine: every transaction is a block of its own), its dump kept across a stop."""

    network = "ethereum"
    client_class = EthereumClient

    def __init__(self, workdir):
        # --state: the chain is dumped when the node stops and loaded when it starts again (same block hashes).
        state = ("--state", str(workdir / "state.json"), "--preserve-historical-states")
        self.node = AnvilNode(workdir, extra_args=state).start()
        self.tokens = deploy_tokens(self.node)  # USDT, USDC and FAKE_USDT
        self.forwarder = deploy(self.node, "Forwarder")

    @property
    def usdt(self) -> str:
        return self.tokens["USDT"]

    @property
    def fake_usdt(self) -> str:
        return self.tokens["FAKE_USDT"]

    def watcher_fields(self) -> dict:
        return {"ethereum_rpc_url": self.node.rpc_url, "ethereum_ws_url": self.node.ws_url}

    def payments_fields(self) -> dict:
        return {
            "ethereum_chain": "regtest",
            "ethereum_chain_id": self.node.chain_id,
            "ethereum_xpub": ETHEREUM_XPUB,
            "usdt_ethereum_contract": self.tokens["USDT"],
            "usdc_ethereum_contract": self.tokens["USDC"],
        }

    def normalize(self, address: str) -> str:
        return address.lower()

    def rpc(self, method: str, *params):
        return self.node.rpc(method, *params)

    def _mined(self, txid: str) -> str:
        receipt = self.node.wait_receipt(txid)
        assert receipt["status"] == "0x1", receipt
        return txid

    def pay(self, payment: dict, amount: int) -> str:
        if payment["asset"] == "ETH":
            return self._mined(send(self.node, {"to": payment["address"], "value": hex(amount)}))
        return self._mined(transfer_token(self.node, self.tokens[payment["asset"]], payment["address"], amount))

    def pay_fake_usdt(self, payment: dict, amount: int) -> str:
        return self._mined(transfer_token(self.node, self.fake_usdt, payment["address"], amount))

    def forward(self, payment: dict, amount: int) -> str:
        """ETH paid to the Forwarder contract, which sends it on to the payment's address in an internal call."""
        return self._mined(forward_eth(self.node, self.forwarder, payment["address"], amount))

    def mine(self, blocks: int = 1) -> None:
        for _ in range(blocks):
            self.rpc("evm_mine")

    def height(self) -> int:
        return int(self.rpc("eth_blockNumber"), 16)

    def drop(self, txid: str) -> None:
        """anvil_reorg: the newest block (the payment's) is replaced by one without any transaction."""
        receipt = self.node.wait_receipt(txid)
        assert int(receipt["blockNumber"], 16) == self.height(), "the payment is not in the newest block"
        self.rpc("anvil_reorg", 1, [])
        assert self.rpc("eth_getTransactionReceipt", txid) is None

    def balance(self, payment: dict) -> int:
        if payment["asset"] == "ETH":
            return int(self.rpc("eth_getBalance", payment["address"], "latest"), 16)
        token = self.tokens[payment["asset"]]
        return int(self.rpc("eth_call", {"to": token, "data": balance_of_call(payment["address"])}, "latest"), 16)

    @property
    def running(self) -> bool:
        return self.node.running

    def stop(self) -> None:
        self.node.stop()  # SIGTERM: anvil dumps its state

    def mine_while_stopped(self, blocks: int) -> None:
        pass  # the node is the whole chain: stopped, nothing moves

    def restart(self) -> None:
        """The same anvil again, on the same port, from its dump."""
        self.node.restart()

    def close(self) -> None:
        self.node.stop()


class _Restartable:
    """A double served in this process: `stop` takes its API away, `restart` serves the same chain again
    on the same port."""

    def __init__(self, double):
        self.double = double
        self.running = True

    def stop(self) -> None:
        self.double.stop_serving()
        self.running = False

    def restart(self) -> None:
        self.double.serve()
        self.running = True


class TronChain(FreshAddresses, _Restartable):
    """The Tron double (blocks when asked) with a USDT and another token with USDT's symbol."""

    network = "tron"
    client_class = TronClient

    def __init__(self):
        # Blocks stay unsolidified long enough for a reorganisation of the newest one.
        super().__init__(TronDouble(solidify_after=4).start())
        self.usdt = self.double.deploy_trc20("USDT", 6, 10**15)
        self.fake_usdt = self.double.deploy_trc20("USDT", 6, 10**15)

    def watcher_fields(self) -> dict:
        return {"tron_url": self.double.url, "tron_zmq_url": self.double.events_url}

    def payments_fields(self) -> dict:
        return {"tron_chain": "regtest", "tron_xpub": TRON_XPUB, "usdt_tron_contract": self.usdt}

    def normalize(self, address: str) -> str:
        return address

    def pay(self, payment: dict, amount: int) -> str:
        if payment["asset"] == "TRX":
            txid = self.double.transfer(payment["address"], amount)
        else:
            txid = self.double.trc20_transfer(self.usdt, payment["address"], amount)
        return self._in_a_block(txid)

    def pay_fake_usdt(self, payment: dict, amount: int) -> str:
        return self._in_a_block(self.double.trc20_transfer(self.fake_usdt, payment["address"], amount))

    def _in_a_block(self, txid: str) -> str:
        self.mine(1)
        info = self.double.post("/wallet/gettransactioninfobyid", {"value": txid})
        assert info.get("receipt", {}).get("result", "SUCCESS") == "SUCCESS", info
        return txid

    def mine(self, blocks: int = 1) -> None:
        self.double.mine(blocks)

    def mine_while_stopped(self, blocks: int) -> None:
        """The network goes on while the node's API is away: it has these blocks when it comes back."""
        self.double.chain.mine(blocks)

    def height(self) -> int:
        return self.double.post("/wallet/getnowblock", {})["block_header"]["raw_data"]["number"]

    def drop(self, txid: str) -> None:
        """/double/reorg: the newest block is replaced by one with the same transactions but the payment."""
        self.double.reorg(1, drop=(txid,))
        assert self.double.post("/wallet/gettransactionbyid", {"value": txid}) == {}

    def balance(self, payment: dict) -> int:
        if payment["asset"] == "TRX":
            account = self.double.post("/wallet/getaccount", {"address": payment["address"], "visible": True})
            return account.get("balance", 0)
        evm = self.double.evm
        ok, answer = evm.call(
            evm.dev_accounts[0][0], to_evm(self.usdt), balance_of_call(to_evm(payment["address"])).removeprefix("0x")
        )
        assert ok
        return int(answer, 16)

    def close(self) -> None:
        self.double.stop()


class SolanaChain(_Restartable):
    """The Solana double (blocks when asked); deposit addresses are keypairs made here and imported into
    payments' pool, so that their balances can be read (and spent)."""

    network = "solana"
    client_class = SolanaClient
    pool_size = 8  # addresses imported for each test

    def __init__(self):
        super().__init__(SolanaDouble().start())
        self.wallet = Wallet(self.double.url)
        self.payer = Keypair()
        self.deposit_keys: dict[str, Keypair] = {}
        self.double.rpc("requestAirdrop", str(self.payer.pubkey()), 1_000 * LAMPORTS_PER_SOL)
        self.double.rpc("double_produceBlocks", 2)

    def watcher_fields(self) -> dict:
        return {
            "solana_rpc_url": self.double.url,
            "solana_ws_url": self.double.ws_url,
            "solana_commitment": "confirmed",
        }

    def payments_fields(self) -> dict:
        return {}

    def seed_payments(self, url: str) -> None:
        """Fresh keypairs for payments' Solana address pool."""
        keys = {str(key.pubkey()): key for key in (Keypair() for _ in range(self.pool_size))}
        self.deposit_keys.update(keys)

        def fill(session):
            assert import_solana_addresses(session, list(keys), datetime.now(UTC)) == len(keys)

        in_payments_db(url, fill)

    def normalize(self, address: str) -> str:
        return address

    def rpc(self, method: str, *params):
        return self.double.rpc(method, *params)

    def pay(self, payment: dict, amount: int) -> str:
        """A System transfer from the payer, in a block with one more on top (the `confirmed` commitment)."""
        assert payment["address"] in self.deposit_keys, "not one of the test's pool addresses"
        signature = self.wallet.transfer(self.payer, Pubkey.from_string(payment["address"]), amount)
        self.mine(2)
        found = self.rpc("getTransaction", signature, {"encoding": "json", "commitment": "confirmed"})
        assert found is not None and found["meta"]["err"] is None, found
        return signature

    def mine(self, blocks: int = 1) -> None:
        self.rpc("double_produceBlocks", blocks)

    def mine_while_stopped(self, blocks: int) -> None:
        """The network goes on while the node's API is away: it has these blocks when it comes back."""
        self.double.rpc_handler.call("double_produceBlocks", [blocks])

    def height(self) -> int:
        return self.rpc("getSlot", {"commitment": "confirmed"})

    def drop(self, txid: str) -> None:
        """double_dropBlocks: the payment's block and the one on top become an abandoned fork."""
        self.rpc("double_dropBlocks", 2)
        assert self.rpc("getTransaction", txid, {"encoding": "json", "commitment": "confirmed"}) is None

    def balance(self, payment: dict) -> int:
        return self.rpc("getBalance", payment["address"], {"commitment": "confirmed"})["value"]

    def close(self) -> None:
        self.double.stop()


@pytest.fixture(scope="session")
def ethereum_chain(devnet_installed, tmp_path_factory):
    chain = EthereumChain(tmp_path_factory.mktemp("anvil-e2e"))
    yield chain
    chain.close()


@pytest.fixture(scope="session")
def tron_chain(devnet_installed):
    chain = TronChain()
    yield chain
    chain.close()


@pytest.fixture(scope="session")
def solana_chain():
    chain = SolanaChain()
    yield chain
    chain.close()


@pytest.fixture(params=METHODS, ids=method_id)
def method(request) -> tuple[str, str]:
    """(asset, network) the customer pays with."""
    return request.param


@pytest.fixture
def chain(method, request):
    """The network's driver, its node up (a test that stopped it may have failed before restarting it)."""
    driver = request.getfixturevalue(f"{method[1]}_chain")
    if not driver.running:
        driver.restart()
    return driver


@pytest.fixture
def watcher_settings(chain, watcher_database, quick_settings) -> WatcherSettings:
    network = chain.network
    return quick_settings(
        network,
        watcher_database,
        **chain.watcher_fields(),
        **{f"{network}_confirmations": CONFIRMATIONS, f"{network}_lag_blocks": 2},
    )


@pytest.fixture
def payments_settings(chain, databases, rates_file) -> PaymentsSettings:
    return PaymentsSettings(
        database_url=databases["payments"],
        **chain.payments_fields(),
        **{f"{chain.network}_confirmations": CONFIRMATIONS},
        rate_sources="file",
        rate_min_sources=1,
        rate_file=rates_file,
        rate_refresh_s=3600,
        sweep_interval_s=3600,
    )


@pytest.fixture
def seed_payments(chain):
    return chain.seed_payments


@pytest.fixture
def watching(chain, runtime, wait):
    """`watching(watcher, payment)`: wait until that running replica matches blocks against the payment's
    address (account chains have no mempool: a payment sent sooner is found only by the look at new watches)."""

    def known(watcher, payment: dict) -> None:
        address = chain.normalize(payment["address"])
        wait(lambda: address in runtime(watcher).watchlist.watched.addresses, what=f"the watcher to watch {address}")

    return known
