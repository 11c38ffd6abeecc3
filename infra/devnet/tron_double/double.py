"""`TronDouble`: the double's EVM, chain and HTTP server, started and stopped together."""

import json
import urllib.error
import urllib.request
from typing import Any

from infra.devnet.served import ServedDouble

from .addresses import from_evm, to_base58
from .chain import Chain
from .control import Control
from .events import BlockPublisher
from .evm import Evm
from .server import Handler, Router


class DoubleError(RuntimeError):
    """The double refused a test-only request, or the node API refused a transaction."""


class TronDouble(ServedDouble):
    """A Tron full node's HTTP API on 127.0.0.1, with TRX and TRC-20 state on a private anvil.

    solidify_after: a block is solidified once this many blocks sit on top of it (mainnet: ~19).
    block_interval_s: produce a block every this many seconds; None: only on request (/double/mine).
    port: 0 picks a free one, kept when `serve()` brings the API back after `stop_serving()`.
    The funded accounts are anvil's dev accounts, as Tron addresses (`accounts`, `private_keys`).
    """

    handler = Handler

    def __init__(
        self, *, solidify_after: int = 19, block_interval_s: float | None = None, port: int = 0, events_port: int = 0
    ):
        super().__init__(port=port, block_interval_s=block_interval_s)
        self.solidify_after = solidify_after
        self.events = BlockPublisher(events_port)
        self.evm = Evm()
        self.chain: Chain | None = None
        self._router: Router | None = None

    @property
    def accounts(self) -> list[str]:
        return [to_base58(from_evm(address)) for address, _ in self.evm.dev_accounts]

    @property
    def private_keys(self) -> list[str]:
        return [key for _, key in self.evm.dev_accounts]

    def start(self) -> "TronDouble":
        self.evm.start()
        self.chain = Chain(self.evm, self.solidify_after, self.events.publish)
        keys = {from_evm(address): key for address, key in self.evm.dev_accounts}
        self._router = Router(self.chain, self.evm, Control(self.chain, self.evm, keys))
        return super().start()

    @property
    def events_url(self) -> str:
        """The built-in message queue (ZeroMQ), where each new block is announced under the topic `block`."""
        return self.events.url

    def serve(self) -> "TronDouble":
        """The HTTP API and the message queue: at start, and again (same ports) after `stop_serving()`."""
        with self.chain.lock:
            self.events.bind()
        return super().serve()

    def stop_serving(self) -> None:
        super().stop_serving()
        with self.chain.lock:
            self.events.close()

    def app(self) -> Router:
        return self._router

    def produce_block(self) -> None:
        self.chain.mine(1)

    def stop(self) -> None:
        super().stop()
        self.evm.stop()

    # -- calls, for tests and the CLI ------------------------------------------
    def post(self, path: str, body: dict | None = None) -> Any:
        request = urllib.request.Request(
            self.url + path, data=json.dumps(body or {}).encode(), headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            raise DoubleError(f"{path}: {error.read().decode(errors='replace')}") from None

    def mine(self, blocks: int = 1) -> list[str]:
        return self.post("/double/mine", {"blocks": blocks})["blockIDs"]

    def reorg(self, depth: int, drop: tuple[str, ...] = ()) -> list[str]:
        return self.post("/double/reorg", {"depth": depth, "drop": list(drop)})["blockIDs"]

    def transfer(self, to: str, amount_sun: int, sender: str | None = None) -> str:
        return self._txid(self.post("/double/transfer", {"to": to, "amount": amount_sun, "from": sender}))

    def trc20_transfer(self, contract: str, to: str, amount: int, sender: str | None = None) -> str:
        body = {"contract": contract, "to": to, "amount": amount, "from": sender}
        return self._txid(self.post("/double/trc20_transfer", body))

    def deploy_trc20(self, symbol: str, decimals: int, supply: int) -> str:
        """Base58 address of a new token whose whole supply belongs to accounts[0]."""
        answer = self.post("/double/deploy_trc20", {"symbol": symbol, "decimals": decimals, "supply": supply})
        if "contract_address" not in answer:
            raise DoubleError(f"deploy_trc20 refused: {answer}")
        return answer["contract_address"]

    def deploy(self, bytecode: str, name: str = "contract") -> str:
        """Base58 address of a new contract made from `bytecode` (init code with its constructor arguments)."""
        answer = self.post("/double/deploy", {"bytecode": bytecode, "name": name})
        if "contract_address" not in answer:
            raise DoubleError(f"deploy refused: {answer}")
        return answer["contract_address"]

    def call(self, contract: str, data: str, call_value: int = 0, sender: str | None = None) -> str:
        """A TriggerSmartContract of `data` on `contract`, paying it `call_value` sun; its txid."""
        body = {"contract": contract, "data": data, "call_value": call_value, "from": sender}
        return self._txid(self.post("/double/call", body))

    @staticmethod
    def _txid(answer: dict) -> str:
        if not answer.get("result"):
            message = bytes.fromhex(answer.get("message", "")).decode(errors="replace")
            raise DoubleError(f"{answer.get('code')}: {message}")
        return answer["txid"]
