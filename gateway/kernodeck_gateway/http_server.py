"""uvicorn's httptools protocol, with a response's head and body reaching the socket in one write.

uvicorn writes the head when the app starts the response and the body when it sends it, two send
syscalls and two wake-ups of the client for one small response. Here the writes made within one step of
the event loop (an app's start and body, with nothing awaited between them) are joined and written at its
end; the order of the bytes and the flow control stay uvicorn's."""

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class CoalescingTransport:
    """The connection's transport, its writes held until the event loop's current step ends."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._held:
            self._loop.call_soon(self._flush)
        self._held.append(data)

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def _flush(self) -> None:
        data = b"".join(self._held)
        self._held.clear()
        # A transport closing by itself lost its peer: what it was given last would have gone nowhere.
        if data and not self._transport.is_closing():
            self._transport.write(data)

    def __getattr__(self, name: str):
        return getattr(self._transport, name)


class HttpProtocol(HttpToolsProtocol):
    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(CoalescingTransport(transport, self.loop))
