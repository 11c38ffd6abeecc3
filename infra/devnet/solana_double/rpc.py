"""JSON-RPC 2.0 dispatch: agave's methods a wallet and a payment watcher use, with agave's params,
results and error codes, plus test-only `double_*` methods."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from . import chain_methods, double_methods, transaction_methods
from .jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError
from .ledger import Ledger

log = logging.getLogger(__name__)

METHODS: dict[str, Callable[[Ledger, list], Any]] = {
    **chain_methods.METHODS,
    **transaction_methods.METHODS,
    **double_methods.METHODS,
}


class SolanaRpc:
    """Answers JSON-RPC request bodies; one request at a time touches the ledger."""

    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self._lock = threading.Lock()

    def handle(self, body: bytes) -> dict | list:
        try:
            request = json.loads(body)
        except ValueError:
            return _error(None, RpcError(PARSE_ERROR, "Parse error"))
        if isinstance(request, list) and request:
            return [self._answer(r) for r in request]
        return self._answer(request)

    def call(self, name: str, params: list) -> Any:
        handler = METHODS.get(name)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, "Method not found")
        with self._lock:
            return handler(self.ledger, params)

    def _answer(self, request: Any) -> dict:
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return _error(None, RpcError(INVALID_REQUEST, "Invalid request"))
        params = request.get("params", [])
        try:
            if not isinstance(params, list):
                raise RpcError(INVALID_PARAMS, "Invalid params: expected an array")
            result = self.call(request["method"], params)
        except RpcError as e:
            return _error(request.get("id"), e)
        except Exception:
            log.exception("%s failed", request["method"])
            return _error(request.get("id"), RpcError(INTERNAL_ERROR, "Internal error"))
        return {"jsonrpc": "2.0", "result": result, "id": request.get("id")}


def _error(request_id: Any, error: RpcError) -> dict:
    return {"jsonrpc": "2.0", "error": error.to_json(), "id": request_id}
