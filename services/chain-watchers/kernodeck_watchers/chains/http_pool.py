"""HTTP connections to a node kept open between calls: one TCP (and TLS) handshake per connection, not per call.

A node or a paid provider is asked many times a second (a block ahead, its receipts, the tip): `urlopen` opened a
new connection for each. Here each origin (scheme, host, port) keeps the connections its calls have finished
with, up to IDLE_PER_ORIGIN, and a call takes one of them or opens one (the read-ahead's green threads each hold
their own at once). Every call a watcher makes reads the chain, so a call whose kept connection turns out closed
by the server (it closed it while idle) is sent once more on a fresh one.
"""

import http.client
import ssl
from collections import defaultdict
from dataclasses import dataclass
from email.message import Message
from urllib.parse import urlsplit

IDLE_PER_ORIGIN = 8
# What a kept connection closed by the server while idle raises on its next use (the request written, no answer).
STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Message
    body: bytes


class HttpPool:
    def __init__(self, idle_per_origin: int = IDLE_PER_ORIGIN):
        self.idle_per_origin = idle_per_origin
        self._idle: dict[tuple[str, str, int | None], list[http.client.HTTPConnection]] = defaultdict(list)
        self._tls = ssl.create_default_context()
        self.opened = 0  # connections opened so far (tests and the benchmark read it)

    def post(self, url: str, body: bytes, headers: dict[str, str], timeout_s: float) -> Answer:
        parts = urlsplit(url)
        origin = (parts.scheme, parts.hostname or "", parts.port)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        idle = self._idle[origin]
        while idle:  # a kept connection first; one the server closed meanwhile is replaced by a fresh one
            connection = idle.pop()
            try:
                return self._exchange(origin, connection, target, body, headers, timeout_s)
            except STALE:
                connection.close()
        return self._exchange(origin, self._open(origin, timeout_s), target, body, headers, timeout_s)

    def _open(self, origin: tuple[str, str, int | None], timeout_s: float) -> http.client.HTTPConnection:
        scheme, host, port = origin
        self.opened += 1
        if scheme == "https":
            return http.client.HTTPSConnection(host, port, timeout=timeout_s, context=self._tls)
        if scheme != "http":
            raise ValueError(f"unsupported URL scheme {scheme!r}")
        return http.client.HTTPConnection(host, port, timeout=timeout_s)

    def _exchange(self, origin, connection, target: str, body: bytes, headers: dict[str, str], timeout_s: float):
        connection.timeout = timeout_s
        if connection.sock is not None:
            connection.sock.settimeout(timeout_s)
        try:
            connection.request("POST", target, body=body, headers=headers)
            response = connection.getresponse()
            answer = Answer(response.status, response.headers, response.read())
        except BaseException:
            connection.close()  # half a request or half an answer: the connection is of no further use
            raise
        if response.will_close:
            connection.close()
        elif len(self._idle[origin]) < self.idle_per_origin:
            self._idle[origin].append(connection)
        else:
            connection.close()
        return answer

    def close(self) -> None:
        for idle in self._idle.values():
            while idle:
                idle.pop().close()
