"""0004: a watcher database with Tron watches upgrades with each one's account id stored, and the watchlist
loaded from it matches logs by that id."""

from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from sqlalchemy import MetaData, Table, select

from kernodeck_chains.addresses import tron_address_of
from kernodeck_kit.db import make_engine
from kernodeck_kit.migrations import alembic_config
from kernodeck_kit.outbox import Store
from kernodeck_kit.testing import assert_schema_is_the_models
from kernodeck_watchers.chains.tron import TronClient, trc20_transfers
from kernodeck_watchers.store.unit import watcher_units
from kernodeck_watchers.watchlist import Watchlist

from .test_watched_ids import paying

PACKAGE = "kernodeck_watchers"
ACCOUNTS = [bytes([n]) * 20 for n in (0, 7, 255)]
WATCHES = [("tron", tron_address_of(a)) for a in ACCOUNTS] + [
    ("tron", "T" + "x" * 33),  # text that is no Tron address: no key
    ("ethereum", "0x" + "ab" * 20),  # watched as its blocks name it: no key
]


@pytest.fixture
def at_0003(database_at) -> str:
    """The URL of a watcher database at revision 0003."""
    return database_at(PACKAGE, "0003_processed_at_index")


def test_a_database_at_0003_upgrades_with_each_tron_watchs_account_id_stored(at_0003):
    engine = make_engine(at_0003)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        watches = Table("watched_addresses", MetaData(), autoload_with=conn)
        conn.execute(
            watches.insert(),
            [
                {"network": network, "address": address, "payment_id": address, "token": None,
                 "watch_until": now + timedelta(days=1), "required_confirmations": 19, "added_at": now}
                for network, address in WATCHES
            ],
        )  # fmt: skip

    command.upgrade(alembic_config(PACKAGE, at_0003), "heads")

    with engine.begin() as conn:
        watches = Table("watched_addresses", MetaData(), autoload_with=conn)
        keys = dict(conn.execute(select(watches.c.address, watches.c.match_key)).all())
    assert keys == {
        address: TronClient.match_key(address) if network == "tron" else None for network, address in WATCHES
    }
    assert [keys[tron_address_of(a)] for a in ACCOUNTS] == [a.hex() for a in ACCOUNTS]
    decoded = []
    watchlist = Watchlist("tron", str.strip, 19, lambda address: decoded.append(address))
    watchlist.load(watcher_units(Store(engine, "chain", relay=None), "tron"), [], now)
    engine.dispose()
    assert decoded == ["T" + "x" * 33]  # only the watch that stored no key
    assert [len(trc20_transfers(paying(a), watchlist.watched.addresses)) for a in ACCOUNTS] == [1, 1, 1]
    assert_schema_is_the_models(PACKAGE, at_0003)
