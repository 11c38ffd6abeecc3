"""What `make run` and the chain tests get from infra/local/devnet.py when nodes are missing, without starting any."""

import pytest

from infra.devnet import nodes
from infra.local.devnet import Devnet, configured_watchers, dev_solana_addresses
from infra.local.run import read_dotenv, wants_devnet
from infra.local.stack import ROOT, Stack, watcher_env
from kernodeck_chains.addresses import is_valid_solana_address
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.methods import METHODS


def test_a_missing_node_is_skipped_with_the_command_that_installs_it(tmp_path, monkeypatch):
    monkeypatch.setattr(nodes.BitcoinNode, "find", classmethod(lambda cls: None))
    lines = []
    devnet = Devnet(tmp_path, networks=("bitcoin",))
    env = devnet.start(log=lines.append)

    assert devnet.up == ()
    why = "bitcoind is not installed: run infra/devnet/install.sh bitcoin"
    assert devnet.skipped == {"bitcoin": why}
    assert lines == [f"bitcoin: skipped, {why}"]
    assert not any(key.startswith("WATCHER_BITCOIN_") for key in env)
    assert f"bitcoin: not running ({why})" in devnet.how_to_pay()


def test_the_methods_of_networks_without_a_node_are_switched_off(tmp_path):
    env = Devnet(tmp_path, networks=()).env()
    off = PaymentsSettings(disabled_methods=env["PAYMENTS_DISABLED_METHODS"]).switched_off()
    assert off == {(method.asset, method.network) for method in METHODS}


def test_the_dev_solana_pool_is_the_same_valid_addresses_every_run():
    addresses = dev_solana_addresses()
    assert addresses == dev_solana_addresses()
    assert len(set(addresses)) == len(addresses) == 1000
    assert all(is_valid_solana_address(address) for address in addresses)


def test_outside_the_devnet_a_watcher_runs_where_a_node_url_is_set():
    environ = {"WATCHER_BITCOIN_RPC_URL": "http://node:8332", "WATCHER_TRON_URL": "http://tron:8090"}
    assert configured_watchers(environ) == ("bitcoin", "tron")
    assert configured_watchers({"WATCHER_LITECOIN_RPC_URL": ""}) == ()


def test_make_run_starts_the_local_chains_unless_a_payments_or_watcher_setting_has_a_value():
    assert wants_devnet({"AMQP_URI": "amqp://guest:guest@127.0.0.1:5672/", "WATCHER_DATABASE_URL": ""})
    assert not wants_devnet({"PAYMENTS_BITCOIN_XPUB": "zpub6r..."})
    assert not wants_devnet({"WATCHER_BITCOIN_RPC_URL": "http://node:8332"})


def test_a_copy_of_env_example_keeps_the_local_chains():
    assert wants_devnet(read_dotenv(ROOT / ".env.example"))


@pytest.mark.parametrize(
    ("env", "database"),
    [
        ({}, ""),
        ({"WATCHER_DATABASE_URL": "postgresql://db/watchers"}, "postgresql://db/watchers"),
        (
            {"WATCHER_DATABASE_URL": "postgresql://db/w", "WATCHER_BITCOIN_DATABASE_URL": "postgresql://db/btc"},
            "postgresql://db/btc",
        ),
    ],
)
def test_each_watcher_gets_its_database_and_metrics_port(env, database):
    settings = watcher_env(env, "bitcoin")
    assert settings["WATCHER_DATABASE_URL"] == database
    assert int(settings["WATCHER_METRICS_PORT"]) > 0
    assert watcher_env({"WATCHER_BITCOIN_METRICS_PORT": "9110"}, "bitcoin")["WATCHER_METRICS_PORT"] == "9110"


def test_a_watcher_process_runs_its_network():
    stack = Stack(env={"WATCHER_LITECOIN_DATABASE_URL": "postgresql://db/ltc"}, watchers=("litecoin",))
    process = stack.watcher("litecoin")
    assert process.name == "watcher-litecoin"
    assert process.argv[1:] == ["--network", "litecoin"]
    assert process.argv[0].endswith("kernodeck-watcher")
    assert process.env["WATCHER_DATABASE_URL"] == "postgresql://db/ltc"
    assert stack.watcher_metrics_url("litecoin").endswith(f":{process.env['WATCHER_METRICS_PORT']}/metrics")
