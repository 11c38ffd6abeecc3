"""Refuse request bodies over a size limit before they reach a route."""

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


def _problem_body(limit: int) -> bytes:
    return json.dumps(
        {
            "type": "urn:kernodeck:problem:payload_too_large",
            "title": "Request body too large",
            "status": 413,
            "detail": f"the request body is over {limit} bytes",
            "code": "payload_too_large",
            "errors": [],
        }
    ).encode()


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((value for name, value in scope["headers"] if name == b"content-length"), None)
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return

        if declared is not None:
            # The HTTP server holds the body to its declared length.
            await self.app(scope, receive, send)
            return

        # No length given (chunked): read it all, up to the limit, before the app sees it.
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        body = _problem_body(self.max_bytes)
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/problem+json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
