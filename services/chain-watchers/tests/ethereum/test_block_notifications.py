"""newHeads over websocket: the watcher hears of each anvil block at once instead of at its next poll, hears
again after the node restarts, and polls on when the websocket cannot be reached."""

import logging

import eventlet
import pytest
from prometheus_client import REGISTRY

from infra.devnet.nodes import AnvilNode, free_port
from infra.devnet.tokens import send
from kernodeck_watchers import notify
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.notify import block_source, listen_for_blocks

CONFIRMATIONS = 2
POLL_S = 120  # no pass by polling during a test: only notifications wake the watcher
UNREACHABLE = f"ws://127.0.0.1:{free_port()}"  # nothing listens there


@pytest.fixture
def ws_url(anvil) -> str:
    return anvil.ws_url


@pytest.fixture
def watcher_settings(anvil, ws_url, watcher_database, quick_settings) -> WatcherSettings:
    return quick_settings(
        "ethereum",
        watcher_database,
        ethereum_rpc_url=anvil.rpc_url,
        ethereum_ws_url=ws_url,
        ethereum_confirmations=CONFIRMATIONS,
        poll_interval_s=POLL_S,
    )


@pytest.fixture
def watching(fake_payments, start_watcher, announce, anvil, watcher_db, new_address, wait):
    """`watching(**settings)`: a started watcher that has scanned the tip and watches the address it returns."""

    def start(**settings) -> str:
        start_watcher(**settings)
        tip = int(anvil.rpc("eth_blockNumber"), 16)
        wait(lambda: watcher_db.cursor_height() == tip, what="the first pass")
        address = new_address()
        announce(address)
        wait(lambda: address in watcher_db.watched(), what="the watcher to store the address")
        return address

    return start


def test_a_payment_is_confirmed_within_seconds_while_the_poll_is_minutes_away(anvil, watching, tap):
    address = watching()
    txid = send(anvil, {"to": address, "value": "0x7"})  # automine: a block of its own
    tap.wait_for("transfer_seen", seconds=10, txid=txid)
    anvil.rpc("evm_mine")
    confirmed = tap.wait_for("transfer_confirmed", seconds=10, txid=txid)
    assert confirmed["confirmations"] == CONFIRMATIONS


@pytest.mark.parametrize("ws_url", [f"{UNREACHABLE}/v3/secret-api-key"], ids=["key-in-the-path"])
def test_an_unreachable_websocket_leaves_the_watcher_polling_and_its_key_unlogged(anvil, watching, tap, caplog):
    with caplog.at_level(logging.WARNING, logger=notify.__name__):
        address = watching(poll_interval_s=0.2)
        txid = send(anvil, {"to": address, "value": "0x7"})
        tap.wait_for("transfer_seen", txid=txid)
    failures = [r for r in caplog.records if r.name == notify.__name__]
    assert failures and all(r.url == UNREACHABLE for r in failures)
    assert "secret" not in caplog.text


def test_the_listener_subscribes_again_after_the_node_restarts(tmp_path, monkeypatch, wait):
    if not AnvilNode.installed():
        pytest.skip("anvil is not installed: run infra/devnet/install.sh anvil")
    monkeypatch.setattr(notify, "RETRY_S", 0.1)
    heard = []

    def mine_until_heard() -> None:
        before = len(heard)

        def mined_and_heard() -> bool:
            node.rpc("evm_mine")
            return len(heard) > before

        wait(mined_and_heard, what="a block announcement")

    def counted(name: str) -> float:
        return REGISTRY.get_sample_value(f"kernodeck_watcher_{name}_total", {"scheme": "ws"}) or 0.0

    failures_before = counted("block_notification_failures")
    notifications_before = counted("block_notifications")
    with AnvilNode(tmp_path) as node:
        source = block_source(WatcherSettings(network="ethereum", ethereum_ws_url=node.ws_url))
        listener = eventlet.spawn(listen_for_blocks, source, lambda: heard.append(True))
        try:
            mine_until_heard()
            node.restart()  # the connection drops; the same port answers again
            mine_until_heard()
        finally:
            listener.kill()
    assert counted("block_notification_failures") > failures_before
    assert counted("block_notifications") - notifications_before == len(heard)
