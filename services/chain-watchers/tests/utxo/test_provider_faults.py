"""The watcher behind a fault-injecting proxy in front of the real node: a provider that throttles, fails an
answer now and then, or load-balances onto a backend a few blocks behind. The rule each time: no payment lost,
no transfer reverted that is still canonical, the network never reported lagging for it."""

import time

import eventlet
import pytest

from infra.devnet.fault_proxy import RpcFailure, fail, rpc_answer, throttle
from kernodeck_watchers.config import WatcherSettings

from .conftest import CONFIRMATIONS

AMOUNT = 512_000
# Requests the watcher had sent before the 429 reached it may reach the proxy just after: they are not retries.
IN_FLIGHT_S = 0.05


@pytest.fixture
def watcher_settings(proxy, settings_on) -> WatcherSettings:
    return settings_on(proxy.url)


def scan_requests(proxy, after: float) -> list[float]:
    """When the scans asked the node anything after `after` (Litecoin's long poll for blocks aside)."""
    return [at for at, _, body in proxy.requests if at > after and not is_long_poll(body)]


def is_long_poll(body) -> bool:
    return isinstance(body, dict) and body.get("method") == "waitforblockheight"


def test_a_throttled_watcher_waits_for_retry_after_whatever_wakes_it(node, proxy, watched, tap, wait):
    answered = []
    once = throttle(1, "2")

    def throttled(path, body):
        reply = None if is_long_poll(body) else once(path, body)
        if reply is not None:
            answered.append(time.monotonic())
        return reply

    proxy.fault = throttled
    (throttled_at,) = wait(lambda: list(answered), what="a request to be throttled")
    eventlet.sleep(IN_FLIGHT_S)
    node.mine(1)  # a block announcement does not cut the wait short
    eventlet.sleep(2.5)
    after = scan_requests(proxy, throttled_at + IN_FLIGHT_S)
    assert after and after[0] - throttled_at >= 1.9
    txid = node.pay(watched, AMOUNT)
    node.mine(CONFIRMATIONS)
    tap.wait_for("transfer_confirmed", txid=txid)
    assert not tap.lagging_reported()


def test_failed_answers_are_not_an_outage(node, proxy, watched, tap):
    txid = node.pay(watched, AMOUNT)
    proxy.fault = fail(3)
    node.mine(CONFIRMATIONS)
    tap.wait_for("transfer_confirmed", txid=txid)
    assert not tap.lagging_reported()


def test_a_backend_behind_the_scanned_chain_reverts_nothing(node, proxy, watched, tap, wait):
    txid = node.pay(watched, AMOUNT)
    node.mine(1)
    wait(lambda: any(e["confirmations"] == 1 for e in tap.transfers(txid)), what="the payment in its block")
    behind = node.height() - 2
    behind_hash = node.rpc("getblockhash", behind)

    def lagging_backend(path, body):
        if not isinstance(body, dict):
            return None
        method, params = body.get("method"), body.get("params") or []
        if method == "getblockhash" and params and params[0] > behind:
            answer = rpc_answer(method, lambda _: RpcFailure(-8, "Block height out of range"))
        elif method == "getbestblockhash":
            answer = rpc_answer(method, lambda _: behind_hash)
        elif method == "getblockcount":
            answer = rpc_answer(method, lambda _: behind)
        else:
            return None
        return answer(path, body)

    proxy.fault = lagging_backend
    asked = len(proxy.requests)
    deadline = time.monotonic() + 20
    while sum(1 for _, _, b in proxy.requests[asked:] if isinstance(b, dict) and b["method"] == "getbestblockhash") < 5:
        assert time.monotonic() < deadline, "the watcher stopped asking for the tip"
        eventlet.sleep(0.05)
    proxy.fault = None
    node.mine(1)
    tap.wait_for("transfer_confirmed", txid=txid, confirmations=CONFIRMATIONS)
    assert "transfer_reverted" not in [e["type"] for e in tap.transfers(txid)]
    assert not tap.lagging_reported()
