"""Settings per network, the client of each network, and the command line."""

import pytest
from prometheus_client import REGISTRY

from kernodeck_watchers.chains.base import NodeError
from kernodeck_watchers.clients import build_client
from kernodeck_watchers.config import WatcherSettings
from kernodeck_watchers.instrumented import InstrumentedClient
from kernodeck_watchers.main import main

pytestmark = pytest.mark.unit


def test_each_network_gets_its_own_name_port_and_payments_default_confirmations():
    bitcoin, litecoin = WatcherSettings(network="bitcoin"), WatcherSettings(network="litecoin")
    assert (bitcoin.service_name, bitcoin.metrics_port, bitcoin.confirmations, bitcoin.lag_blocks) == (
        "watcher_bitcoin",
        9110,
        2,
        2,
    )
    assert (litecoin.service_name, litecoin.metrics_port, litecoin.confirmations) == ("watcher_litecoin", 9111, 6)
    assert [WatcherSettings(network=n).confirmations for n in ("ethereum", "tron", "solana")] == [12, 19, 32]


def test_node_settings_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("WATCHER_BITCOIN_RPC_URL", "http://node:18443")
    monkeypatch.setenv("WATCHER_BITCOIN_ZMQ_URL", "tcp://node:28332")
    monkeypatch.setenv("WATCHER_ETHEREUM_WS_URL", "wss://node:8546/key")
    monkeypatch.setenv("WATCHER_LITECOIN_CONFIRMATIONS", "12")
    settings = WatcherSettings(network="bitcoin")
    assert (settings.bitcoin_rpc_url, settings.block_notify_url) == ("http://node:18443", "tcp://node:28332")
    assert WatcherSettings(network="litecoin").confirmations == 12
    assert WatcherSettings(network="litecoin").block_notify_url == ""
    assert WatcherSettings(network="ethereum").block_notify_url == "wss://node:8546/key"
    assert WatcherSettings(network="tron").block_notify_url == ""


def test_the_settings_reach_the_container_whole():
    settings = WatcherSettings(network="litecoin", poll_interval_s=0.5, litecoin_rpc_password="secret")
    config = settings.nameko_config()
    assert WatcherSettings.from_nameko_config(config) == settings


def test_bitcoin_and_litecoin_share_the_utxo_client():
    assert build_client(WatcherSettings(network="litecoin")).normalize("RLTC1QABC") == "rltc1qabc"
    assert build_client(WatcherSettings(network="bitcoin")).normalize("BCRT1QABC") == "bcrt1qabc"


def test_the_command_line_refuses_an_unknown_network(capsys):
    with pytest.raises(SystemExit):
        main(["--network", "dogecoin"])
    assert "invalid choice" in capsys.readouterr().err


def test_node_calls_are_timed_and_their_failures_counted(chain):
    client = InstrumentedClient(chain)

    def sample(name: str) -> float:
        return REGISTRY.get_sample_value(f"kernodeck_watcher_{name}", {"network": "bitcoin", "call": "tip"}) or 0.0

    failed_before, timed_before = sample("rpc_errors_total"), sample("rpc_seconds_sum")
    client.tip()
    chain.down = True
    with pytest.raises(NodeError):
        client.tip()
    assert sample("rpc_errors_total") == failed_before + 1
    assert sample("rpc_seconds_sum") > timed_before
