"""The balance check's token side on anvil: a USDT payment in a block no scan or look covered (its watch reached the
watcher after the look-back window) is reported, where a payment the watcher saw is not."""

import pytest

from infra.devnet.tokens import transfer_token
from kernodeck_watchers.config import WatcherSettings

CONFIRMATIONS = 2
LOOK_BACK = 2  # blocks a new watch is looked up in


@pytest.fixture
def watcher_settings(anvil, settings_on) -> WatcherSettings:
    return settings_on(
        anvil.rpc_url,
        ethereum_confirmations=CONFIRMATIONS,
        targeted_check_blocks=LOOK_BACK,
        balance_check_interval_s=0.2,
    )


def test_a_token_payment_no_scan_saw_is_reported_and_a_seen_one_is_not(
    anvil, tokens, fake_payments, start_watcher, announce, watcher_db, new_address, followed, tap, wait
):
    usdt = tokens["USDT"]
    start_watcher()
    followed()
    seen, missed = new_address(), new_address()
    announce(seen, token=usdt)
    wait(lambda: seen in watcher_db.watched(), what="the watcher to store the address")
    paid_seen = transfer_token(anvil, usdt, seen, 3_000)
    paid_missed = transfer_token(anvil, usdt, missed, 8_000)  # its watch is late: a broker outage, say
    for _ in range(LOOK_BACK + 3):  # one at a time: the last pass, where the look starts from, is past them
        anvil.rpc("evm_mine")
        followed()
    announce(missed, token=usdt)

    mismatch = tap.wait_for("balance_mismatch", address=missed)

    assert (mismatch["token"], mismatch["balance"], mismatch["seen"]) == (usdt.lower(), 8_000, 0)
    tap.wait_for("transfer_confirmed", txid=paid_seen)
    assert not [e for e in tap.transfers(paid_missed)]  # the scans and the look did miss it
    assert [e["address"] for e in tap.events("balance_mismatch")] == [missed]
