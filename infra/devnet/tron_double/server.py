"""HTTP plumbing: POST (JSON body) or GET (query string) to /wallet/*, /walletsolidity/* and /double/*.

As java-tron, the node API answers HTTP 200 with `{"Error": ...}` when it
fails; the test-only /double/ endpoints answer HTTP 400 instead.
"""

import json
import logging
from urllib.parse import parse_qs, urlsplit

from infra.devnet.served import JsonHandler

from . import wallet
from .chain import Chain, ChainError
from .control import Control
from .evm import Evm

log = logging.getLogger(__name__)


class Router:
    def __init__(self, chain: Chain, evm: Evm, control: Control):
        self.chain = chain
        self.evm = evm
        self.control = control.endpoints()

    def route(self, path: str, params: dict) -> tuple[int, object]:
        prefix, _, name = path.strip("/").partition("/")
        with self.chain.lock:
            if prefix == "double" and name in self.control:
                return self._control(name, params)
            table = {"wallet": wallet.WALLET, "walletsolidity": wallet.SOLIDITY}.get(prefix, {})
            if name in table:
                return 200, self._node(table[name], prefix == "walletsolidity", params)
        return 404, {"Error": f"no endpoint {path}"}

    def _node(self, endpoint, solidified: bool, params: dict) -> object:
        visible = params.get("visible") in (True, "true")
        view = wallet.View(self.chain, self.evm, self.chain.height(solidified), visible)
        try:
            return endpoint(view, params)
        except wallet.ApiError as error:
            return {"Error": f"class {error.java_class} : {error.message}"}
        except (ValueError, KeyError) as error:
            return {"Error": f"class java.lang.IllegalArgumentException : {error}"}

    def _control(self, name: str, params: dict) -> tuple[int, object]:
        try:
            return 200, self.control[name](params)
        except (ChainError, ValueError, KeyError) as error:
            return 400, {"Error": str(error)}


class Handler(JsonHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            params = json.loads(body) if body.strip() else {}
        except ValueError:
            self.reply_json(200, {"Error": "class com.alibaba.fastjson.JSONException : invalid JSON"})
            return
        self._answer(params if isinstance(params, dict) else {})

    def do_GET(self) -> None:
        self._answer({key: values[-1] for key, values in parse_qs(urlsplit(self.path).query).items()})

    def _answer(self, params: dict) -> None:
        try:
            status, payload = self.server.app.route(urlsplit(self.path).path, params)
        except Exception as error:  # an EVM failure: report it rather than drop the connection
            log.exception("tron double: %s failed", self.path)
            status, payload = 500, {"Error": repr(error)}
        self.reply_json(status, payload)
