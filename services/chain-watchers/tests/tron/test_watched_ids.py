"""A Tron watcher's watched set keeps each address's account id, through loading, syncing and taking over: the id
is decoded once, as the watch is written, and read back with it."""

from datetime import UTC, datetime, timedelta

import pytest

from kernodeck_chains.addresses import tron_address_of
from kernodeck_watchers.chains.base import match_key
from kernodeck_watchers.chains.tron import TronClient, trc20_transfers
from kernodeck_watchers.instrumented import InstrumentedClient
from kernodeck_watchers.watchlist import Watchlist

from .test_parsing import TRANSFER_TOPIC, transfer_log

pytestmark = pytest.mark.unit


def paying(account: bytes) -> dict:
    return {
        "id": "11" * 32,
        "log": [transfer_log(topics=[TRANSFER_TOPIC, "0" * 24 + "01" * 20, "0" * 24 + account.hex()])],
    }


def test_the_watchlist_of_a_tron_client_matches_logs_by_account_id_after_load_and_sync(units):
    client = InstrumentedClient(TronClient("http://node.invalid"))
    assert match_key(client) is TronClient.match_key and match_key(object()) is None
    now = datetime.now(UTC)
    first, second, third = (bytes([n]) * 20 for n in (1, 2, 3))
    decoded = []

    def key(address: str) -> str | None:
        decoded.append(address)
        return TronClient.match_key(address)

    watchlist = Watchlist("tron", client.normalize, 19, key)
    rows = [
        watchlist.row(tron_address_of(a), f"p{a[0]}", now + timedelta(days=1), 19, None, now) for a in (first, second)
    ]
    watchlist.add(units, rows)
    watchlist.load(units, [], now)
    later = now + timedelta(minutes=1)
    watchlist.add(units, [watchlist.row(tron_address_of(third), "p3", later + timedelta(days=1), 19, None, later)])
    watchlist.sync(units, later)
    watched = watchlist.watched.addresses
    assert [len(trc20_transfers(paying(a), watched)) for a in (first, second, third)] == [1, 1, 1]
    assert trc20_transfers(paying(third), watched)[0].address == tron_address_of(third)
    watchlist.unload()
    watchlist.load(units, [], later)  # a replica taking over
    assert len(watchlist.watched.addresses.keys) == 3
    assert decoded == [tron_address_of(a) for a in (first, second, third)]  # each once, as its row was written
