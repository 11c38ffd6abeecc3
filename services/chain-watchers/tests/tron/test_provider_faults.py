"""The Tron watcher behind a fault-injecting proxy in front of the double, as behind a load-balanced provider one of
whose backends lags: half the requests are answered as that backend would, its head a few blocks older, `{}` for a
newer block and `[]` for its transaction infos. The rule: no payment lost, no transfer reverted that is still
canonical, the network never reported lagging for it."""

import json
import random

import pytest

from infra.devnet.fault_proxy import Reply
from kernodeck_watchers.config import DEFAULT_TIP_DELAY_BLOCKS, WatcherSettings

CONFIRMATIONS = 3
BEHIND = 3  # blocks the lagging backend lacks
TIP_DELAY = DEFAULT_TIP_DELAY_BLOCKS["tron"]  # as in production


@pytest.fixture
def watcher_settings(proxy, settings_on) -> WatcherSettings:
    return settings_on(proxy.url, tron_confirmations=CONFIRMATIONS, tron_lag_blocks=2, tron_tip_delay_blocks=TIP_DELAY)


def lagging_backend(double, head, answered: list[str]):
    """Half the requests (picked as a load balancer would, the same every run) answered by a backend BEHIND blocks
    behind the double's head."""
    balancer = random.Random(17)

    def reply(body) -> Reply:
        return Reply(200, json.dumps(body).encode(), {"Content-Type": "application/json"})

    def fault(path, body):
        if not isinstance(body, dict) or balancer.random() < 0.5:
            return None
        endpoint, has = path.rsplit("/", 1)[-1], max(head() - BEHIND, 0)
        if endpoint == "getblock":
            answered.append(endpoint)
            return reply(double.post("/wallet/getblock", {**body, "id_or_num": str(has)}))
        if endpoint in ("getblockbynum", "gettransactioninfobyblocknum") and body.get("num", 0) > has:
            answered.append(endpoint)
            return reply({} if endpoint == "getblockbynum" else [])
        return None

    return fault


def test_a_lagging_backend_loses_no_payment_reverts_nothing_and_is_not_an_outage(
    double, node_height, usdt, proxy, watched, followed, tap
):
    answered: list[str] = []
    proxy.fault = lagging_backend(double, node_height, answered)
    trx = double.transfer(watched, 1_234_567)
    double.mine(1)
    followed()
    token = double.trc20_transfer(usdt, watched, 2_500_000)
    for _ in range(CONFIRMATIONS + TIP_DELAY):
        double.mine(1)
        followed()

    for txid in (trx, token):
        tap.wait_for("transfer_confirmed", txid=txid, confirmations=CONFIRMATIONS)
    assert "getblock" in answered  # an older head was read
    assert {"getblockbynum", "gettransactioninfobyblocknum"} & set(answered)  # empty answers were given
    assert "transfer_reverted" not in [e["type"] for e in tap.transfers()]
    assert not tap.lagging_reported()
