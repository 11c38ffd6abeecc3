"""The gateway's HTTP protocol on a real socket: whole responses, in order, a small one in a single write."""

import asyncio
import socket
import sys
from subprocess import PIPE

import uvicorn
import uvloop
from starlette.applications import Starlette
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from kernodeck_gateway.http_server import HttpProtocol


async def small(request):
    return JSONResponse({"path": request.url.path})


async def streamed(_request):
    async def chunks():
        for n in range(3):
            await asyncio.sleep(0)
            yield f"part {n};".encode()

    return StreamingResponse(chunks(), media_type="text/plain")


APP = Starlette(routes=[Route("/small", small, methods=["GET", "HEAD"]), Route("/streamed", streamed)])


# The client runs in a process of its own: one in this process would only read once the server's task had
# written all it had, whatever the number of writes.
CLIENT = """
import socket, sys
port, until_closed, request = int(sys.argv[1]), sys.argv[2] == "1", sys.stdin.buffer.read()
with socket.create_connection(("127.0.0.1", port)) as sock:
    sock.sendall(request)
    while piece := sock.recv(65536):
        sys.stdout.buffer.write(piece)
        if not until_closed:
            break
"""


async def exchange(request: bytes, until_closed: bool) -> bytes:
    """Serves APP with HttpProtocol, sends `request` raw and returns what came back: everything until the
    server closes the connection, or else what the first read got."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(APP, port=port, http=HttpProtocol, log_level="warning", lifespan="off"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        client = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CLIENT, str(port), str(int(until_closed)), stdin=PIPE, stdout=PIPE
        )
        answer, _ = await client.communicate(request)
        return answer
    finally:
        server.should_exit = True
        await serving


def run(request: bytes, until_closed: bool = False) -> bytes:
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(exchange(request, until_closed))


def test_a_small_response_comes_in_one_write():
    answer = run(b"GET /small HTTP/1.1\r\nhost: gateway\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"content-length: 17" in head.lower()
    assert body == b'{"path":"/small"}'


def test_head_gets_its_headers_without_a_body():
    answer = run(b"HEAD /small HTTP/1.1\r\nhost: gateway\r\nconnection: close\r\n\r\n", until_closed=True)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b"\r\n\r\n")


def test_pipelined_requests_are_answered_in_order():
    requests = b"".join(f"GET /small?n={n} HTTP/1.1\r\nhost: gateway\r\n\r\n".encode() for n in range(3))
    answer = run(requests + b"GET /small HTTP/1.1\r\nhost: gateway\r\nconnection: close\r\n\r\n", until_closed=True)
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 4
    assert answer.count(b'{"path":"/small"}') == 4
    assert answer.lower().count(b"connection: close") == 1


def test_a_streamed_response_comes_whole_and_in_order():
    answer = run(b"GET /streamed HTTP/1.1\r\nhost: gateway\r\nconnection: close\r\n\r\n", until_closed=True)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    assert body == b"7\r\npart 0;\r\n7\r\npart 1;\r\n7\r\npart 2;\r\n0\r\n\r\n"
