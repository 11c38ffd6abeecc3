"""A JSON-RPC 1.0 client over HTTP with basic auth, as Bitcoin Core and its forks speak it (stdlib only).

JSON numbers with a fraction are parsed as `Decimal`, so amounts stay exact.
Under eventlet the stdlib sockets are green: a call blocks only its greenthread.
"""

import base64
import http.client
import itertools
import json
from decimal import Decimal
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.request import Request, urlopen

from kernodeck_watchers.chains.base import NodeError


class RpcError(NodeError):
    """The node answered with an error object."""

    def __init__(self, method: str, error: dict):
        self.code = error.get("code")
        super().__init__(f"{method}: {error.get('message')} (code {self.code})")


class JsonRpc:
    def __init__(self, url: str, user: str, password: str, timeout: float):
        self.url = url
        self.timeout = timeout
        token = base64.b64encode(f"{user}:{password}".encode()).decode()
        self._headers = {"Content-Type": "application/json", "Authorization": f"Basic {token}"}
        self._ids = itertools.count(1)

    def call(self, method: str, *params: Any) -> Any:
        reply = self._post({"jsonrpc": "1.0", "id": next(self._ids), "method": method, "params": list(params)}, method)
        return _result(method, reply)

    def batch(self, method: str, params: list[list]) -> list[Any]:
        """One request for many calls of `method`; each answer is its result, or the RpcError it got."""
        if not params:
            return []
        first = next(self._ids)
        self._ids = itertools.count(first + len(params))
        calls = [{"jsonrpc": "1.0", "id": first + i, "method": method, "params": p} for i, p in enumerate(params)]
        replies = self._post(calls, method)
        if not isinstance(replies, list):
            raise NodeError(f"{method}: the node did not answer the batch with a list")
        by_id = {reply.get("id"): reply for reply in replies}
        answers = []
        for call in calls:
            try:
                answers.append(_result(method, by_id.get(call["id"], {"error": {"message": "no answer"}})))
            except RpcError as error:
                answers.append(error)
        return answers

    def _post(self, payload: Any, method: str) -> Any:
        request = Request(self.url, data=json.dumps(payload).encode(), headers=self._headers)
        try:
            with urlopen(request, timeout=self.timeout) as response:
                body = response.read()
        except HTTPError as error:
            # Bitcoin Core answers an RPC error with HTTP 500 (404 for an unknown method) and a JSON body.
            body = error.read()
            if not body:
                raise NodeError(f"{method}: HTTP {error.code} from the node") from None
        except (URLError, OSError, http.client.HTTPException) as error:
            raise NodeError(f"{method}: the node cannot be reached ({error})") from None
        try:
            return json.loads(body, parse_float=Decimal)
        except ValueError:
            raise NodeError(f"{method}: the node answered something other than JSON") from None


def _result(method: str, reply: dict) -> Any:
    if reply.get("error"):
        raise RpcError(method, reply["error"])
    return reply.get("result")
