"""The balance check's token side on the Tron double: a USDT payment in a block no scan or look covered (its watch
reached the watcher after the look-back window) is reported, where a payment the watcher saw is not."""

import pytest

from kernodeck_watchers.config import WatcherSettings

CONFIRMATIONS = 3
LOOK_BACK = 2  # blocks a new watch is looked up in


@pytest.fixture
def watcher_settings(double, settings_on) -> WatcherSettings:
    return settings_on(
        double.url, tron_confirmations=CONFIRMATIONS, targeted_check_blocks=LOOK_BACK, balance_check_interval_s=0.2
    )


def test_a_token_payment_no_scan_saw_is_reported_and_a_seen_one_is_not(
    double, usdt, fake_payments, start_watcher, announce, watcher_db, new_address, followed, tap, wait
):
    start_watcher()
    followed()
    seen, missed = new_address(), new_address()
    announce(seen, token=usdt)
    wait(lambda: seen in watcher_db.watched(), what="the watcher to store the address")
    paid_seen = double.trc20_transfer(usdt, seen, 3_000)
    paid_missed = double.trc20_transfer(usdt, missed, 8_000)  # its watch is late: a broker outage, say
    for _ in range(LOOK_BACK + 3):  # one at a time: the last pass, where the look starts from, is past them
        double.mine(1)
        followed()
    announce(missed, token=usdt)

    mismatch = tap.wait_for("balance_mismatch", address=missed)

    assert (mismatch["token"], mismatch["balance"], mismatch["seen"]) == (usdt, 8_000, 0)
    tap.wait_for("transfer_confirmed", txid=paid_seen)
    assert not [e for e in tap.transfers(paid_missed)]  # the scans and the look did miss it
    assert [e["address"] for e in tap.events("balance_mismatch")] == [missed]
