"""JSON-RPC 2.0 over HTTP: the error both sides use, and a plain call for wallets and tests."""

from __future__ import annotations

import itertools
import json
import urllib.request
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_ids = itertools.count(1)


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(f"{message} (code {code})")
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict:
        error = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def call(url: str, method: str, *params: Any, timeout: float = 30.0) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": list(params)}).encode()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        reply = json.load(response)
    if "error" in reply:
        error = reply["error"]
        raise RpcError(error["code"], error["message"], error.get("data"))
    return reply["result"]
