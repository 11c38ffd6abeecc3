"""What `make run` and the chain tests get from infra/local/devnet.py when nodes are missing, without starting any."""

import pytest

from infra.devnet import nodes
from infra.local.devnet import Devnet, configured_watchers, dev_solana_addresses
from infra.local.run import RunSettings, local_settings, read_dotenv
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


def test_one_setting_switches_the_local_chains(monkeypatch):
    monkeypatch.delenv("KERNODECK_LOCAL_CHAINS", raising=False)
    assert RunSettings().local_chains is True
    for off in ("0", "false"):
        monkeypatch.setenv("KERNODECK_LOCAL_CHAINS", off)
        assert RunSettings().local_chains is False
    monkeypatch.setenv("KERNODECK_LOCAL_CHAINS", "")
    assert RunSettings().local_chains is True


def test_your_own_settings_win_over_the_local_chains_ones_and_keep_them():
    devnet = {
        "PAYMENTS_RATE_FILE": "var/dev-rates.json",
        "PAYMENTS_BITCOIN_CHAIN": "regtest",
        "WATCHER_BITCOIN_RPC_URL": "x",
    }
    mine = {"PAYMENTS_RATE_FILE": "my-rates.json", "PAYMENTS_INTENT_TTL_MINUTES": "2", "PAYMENTS_BITCOIN_CHAIN": ""}
    assert local_settings(devnet, mine) == {"PAYMENTS_BITCOIN_CHAIN": "regtest", "WATCHER_BITCOIN_RPC_URL": "x"}


def test_a_copy_of_env_example_keeps_the_local_chains_and_their_settings(monkeypatch):
    copied = read_dotenv(ROOT / ".env.example")
    for key, value in copied.items():
        monkeypatch.setenv(key, value)
    assert RunSettings().local_chains is True
    assert local_settings({"PAYMENTS_BITCOIN_CHAIN": "regtest"}, copied) == {"PAYMENTS_BITCOIN_CHAIN": "regtest"}


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
