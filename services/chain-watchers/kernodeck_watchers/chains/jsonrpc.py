"""JSON-RPC over HTTP with the stdlib, as the nodes speak it: Bitcoin Core and its forks ("1.0" with basic
auth), Ethereum and Solana nodes ("2.0"; credentials may also sit in the URL: https://user:pass@host/).

JSON numbers with a fraction are parsed as `Decimal`, so amounts stay exact.
Under eventlet the stdlib sockets are green: a call blocks only its greenthread. Connections are kept open
between calls (http_pool). Errors never quote the URL, whose path may hold a provider's API key.
"""

import base64
import gzip
import http.client
import itertools
import json
import zlib
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from kernodeck_watchers.chains.base import NodeError, Throttled
from kernodeck_watchers.chains.http_pool import HttpPool

TOO_MANY_REQUESTS = 429
POOL = HttpPool()  # the process's kept connections, shared by every client of every node


class RpcError(NodeError):
    """The node answered a call with an error object."""

    def __init__(self, method: str, error: Any):
        self.code = error.get("code") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        super().__init__(f"{method}: {message} (code {self.code})")


class JsonRpc:
    def __init__(
        self, url: str, timeout_s: float, user: str = "", password: str = "", version: str = "2.0", gzip: bool = False
    ):
        parts = urlsplit(url)
        if parts.username is not None:
            user, password = unquote(parts.username), unquote(parts.password or "")
            parts = parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else ""))
        self.url = urlunsplit(parts)
        self.timeout_s = timeout_s
        self.version = version
        self.headers: dict[str, str] = {}
        if user or password:
            self.headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        if gzip:  # answers come compressed where the node (a provider's front end) can; plain where not
            self.headers["Accept-Encoding"] = "gzip"
        self._ids = itertools.count(1)

    def call(self, method: str, *params: Any) -> Any:
        reply = self._post(self._request(next(self._ids), method, list(params)), method)
        if not isinstance(reply, dict):
            raise NodeError(f"{method}: unexpected answer {str(reply)[:200]}")
        return ok(_result(method, reply))

    def batch(self, calls: list[tuple[str, list]]) -> list[Any]:
        """One request for many calls, answered in their order; a call the node refused is an RpcError in its place."""
        if not calls:
            return []
        requests = [self._request(next(self._ids), method, params) for method, params in calls]
        replies = self._post(requests, calls[0][0])
        if not isinstance(replies, list):  # a node that refuses batches answers with one error object
            raise NodeError(f"batch of {calls[0][0]}: refused ({str(replies)[:200]})")
        by_id = {reply.get("id"): reply for reply in replies if isinstance(reply, dict)}
        answers = []
        for request in requests:
            reply = by_id.get(request["id"])
            if reply is None:
                raise NodeError(f"{request['method']}: no answer in the batch")
            answers.append(_result(request["method"], reply))
        return answers

    def _request(self, id_: int, method: str, params: list) -> dict:
        return {"jsonrpc": self.version, "id": id_, "method": method, "params": params}

    def _post(self, payload: Any, method: str) -> Any:
        return post_json(self.url, payload, self.timeout_s, self.headers, method)


def post_json(url: str, payload: Any, timeout_s: float, headers: Mapping[str, str], what: str) -> Any:
    """POST `payload` as JSON; the answer, parsed. Any failure is a NodeError about `what`, never naming the URL.

    The JSON body of an HTTP error is an answer too: Bitcoin Core answers an RPC error with HTTP 500 (404 for
    an unknown method). HTTP 429 is Throttled, with the answer's Retry-After.
    """
    body = json.dumps(payload).encode()
    try:
        answer = POOL.post(url, body, {**headers, "Content-Type": "application/json"}, timeout_s)
        if answer.status == TOO_MANY_REQUESTS:
            raise Throttled(f"{what}: throttled (HTTP 429)", retry_after(answer.headers.get("Retry-After")))
        body = answer.body
        if answer.headers.get("Content-Encoding", "").strip().lower() == "gzip":
            body = gzip.decompress(body)
    except (OSError, EOFError, zlib.error, http.client.HTTPException) as error:  # refused, timed out, cut short
        raise NodeError(f"{what}: the node cannot be reached ({error})") from None
    try:
        return json.loads(body, parse_float=Decimal)
    except ValueError:
        raise NodeError(f"{what}: the node answered HTTP {answer.status} with something other than JSON") from None


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After's seconds (a number of seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


def _result(method: str, reply: dict) -> Any:
    """The reply's result, or the RpcError it carries (returned, not raised: a batch keeps it in its place)."""
    if reply.get("error") is not None:
        return RpcError(method, reply["error"])
    return reply.get("result")


def ok(result: Any) -> Any:
    """`result`, unless it is an RpcError: then raised."""
    if isinstance(result, RpcError):
        raise result
    return result
