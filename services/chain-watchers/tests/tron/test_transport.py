"""A Tron node that fails mid-answer is a NodeError (the watcher backs off), and the error names no URL: its
path may hold a provider's API key, and the error goes to the logs."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from kernodeck_watchers.chains.base import NodeError
from kernodeck_watchers.chains.tron import TronClient

KEY = "provider-api-key-123"


class Quiet(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


class CutShort(Quiet):
    """Announces a longer body than it sends, then hangs up."""

    def do_POST(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100")
        self.end_headers()
        self.wfile.write(b'{"blockID": "')
        self.close_connection = True


class Unavailable(Quiet):
    def do_POST(self):
        self.send_error(503)


@pytest.fixture
def node_url(request):
    server = ThreadingHTTPServer(("127.0.0.1", 0), request.param)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{KEY}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("node_url", [CutShort, Unavailable], indirect=True)
def test_a_failed_answer_is_a_node_error_without_the_url(node_url):
    with pytest.raises(NodeError) as raised:
        TronClient(node_url, timeout_s=5).tip()
    assert KEY not in str(raised.value) and "127.0.0.1" not in str(raised.value)
