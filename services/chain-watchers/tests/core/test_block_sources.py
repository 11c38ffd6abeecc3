"""Where a watcher hears of new blocks (ZMQ, websocket subscriptions, the long poll of a node without ZMQ), and
the long poll over a scripted node."""

import logging

import pytest

from kernodeck_watchers import notify, notify_longpoll
from kernodeck_watchers.chains.base import NodeError
from kernodeck_watchers.chains.jsonrpc import RpcError
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.notify import BlockSource, block_source, listen_for_blocks

pytestmark = pytest.mark.unit


class ScriptedNode:
    """waitforblockheight answered from a script of tips (then an error, ending the listener)."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked: list[tuple] = []

    def call(self, method, *params):
        self.asked.append((method, *params))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def tip(height: int, hash_: str) -> dict:
    return {"height": height, "hash": hash_}


@pytest.mark.parametrize(
    ("fields", "schemes"),
    [
        ({"network": "bitcoin", "bitcoin_zmq_url": "tcp://node:28332"}, ["http", "tcp"]),  # the long poll first
        ({"network": "bitcoin"}, ["http"]),
        ({"network": "litecoin", "litecoin_rpc_url": "https://node/key"}, ["https"]),
        ({"network": "ethereum", "ethereum_ws_url": "wss://node:8546/key"}, ["wss"]),
        ({"network": "tron", "tron_zmq_url": "tcp://node:5555"}, ["tcp"]),
        ({"network": "solana", "solana_ws_url": "ws://node:8900"}, ["ws"]),
    ],
)
def test_a_watcher_hears_of_blocks_from_the_long_poll_zmq_or_newheads(fields, schemes):
    source, heard = block_source(WatcherSettings(**fields)), []
    while source is not None:
        heard.append(source.scheme)
        source = source.fallback
    assert heard == schemes


@pytest.mark.parametrize(
    "fields",
    [
        {"network": "ethereum"},
        {"network": "tron"},
        {"network": "solana"},
        {"network": "ethereum", "ethereum_ws_url": "tcp://node:5555"},  # no ZMQ on Ethereum
        {"network": "tron", "tron_zmq_url": "ws://node:8090"},
    ],
)
def test_without_a_notification_url_it_understands_an_account_chain_polls(fields):
    assert block_source(WatcherSettings(**fields)) is None


def test_the_long_poll_asks_for_the_next_height_and_wakes_on_each_new_tip():
    node = ScriptedNode(tip(5, "a"), tip(6, "b"), tip(6, "b"), tip(8, "d"), tip(7, "c2"), NodeError("down"))
    woken = []
    with pytest.raises(NodeError):
        notify_longpoll.listen(node, lambda: woken.append(True))
    heights = [params[1] for params in node.asked]
    assert heights == [0, 6, 7, 7, 9, 8]  # an answer without a new tip (a timeout) asks again for the same
    assert all(params[2] == notify_longpoll.WAIT_MS for params in node.asked)
    assert len(woken) == 4  # the first answer, b, d, and c2: a tip that went back is a change too


def test_a_node_refusing_the_long_poll_leaves_the_watcher_polling_with_one_warning(caplog):
    refused = RpcError("waitforblockheight", {"code": notify_longpoll.METHOD_NOT_FOUND, "message": "Method not found"})
    node = ScriptedNode(refused)
    source = BlockSource("https://provider/secret-key", lambda on_block: notify_longpoll.listen(node, on_block))
    with caplog.at_level(logging.WARNING, logger=notify.__name__):
        listen_for_blocks(source, lambda: None)  # returns instead of retrying
    assert [r.url for r in caplog.records if r.name == notify.__name__] == ["https://provider"]
    assert "secret" not in caplog.text


def test_a_node_refusing_the_long_poll_is_heard_on_its_zmq_instead(caplog):
    refused = RpcError("waitforblockheight", {"code": notify_longpoll.METHOD_NOT_FOUND, "message": "Method not found"})
    node = ScriptedNode(refused)

    def zmq(on_block):
        on_block()
        raise SystemExit  # ends the listener, which would otherwise listen for good

    zmq_source = BlockSource("tcp://node:28332", zmq)
    source = BlockSource("http://node:8332", lambda on_block: notify_longpoll.listen(node, on_block), zmq_source)
    woken = []
    with caplog.at_level(logging.WARNING, logger=notify.__name__), pytest.raises(SystemExit):
        listen_for_blocks(source, lambda: woken.append(True))
    assert woken == [True]
    warned = [(r.url, r.instead) for r in caplog.records if r.name == notify.__name__]
    assert warned == [("http://node:8332", "tcp://node:28332")]


def test_other_node_errors_are_raised_for_a_retry():
    node = ScriptedNode(RpcError("waitforblockheight", {"code": -28, "message": "Loading block index"}))
    with pytest.raises(RpcError):
        notify_longpoll.listen(node, lambda: None)
