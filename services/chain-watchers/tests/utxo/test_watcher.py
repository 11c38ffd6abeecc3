"""The watcher service in a nameko container on the broker, against the real node; its events caught on chain.events."""

import eventlet
from nameko.standalone.rpc import ServiceRpcProxy

from kernodeck_watchers.chains.utxo import UtxoClient

AMOUNT = 378_000


def test_health_tells_the_active_replica_and_its_heights(
    node, fake_payments, start_watcher, watcher_config, watcher_db, wait
):
    start_watcher()
    wait(lambda: watcher_db.cursor_height() == node.height(), what="the first pass")
    with ServiceRpcProxy(f"watcher_{node.network}", watcher_config) as watcher:
        health = watcher.health()
    assert health == {
        "service": f"watcher_{node.network}",
        "network": node.network,
        "active": True,
        "node_height": node.height(),
        "scanned_height": node.height(),
    }


def test_an_rbf_replacement_in_the_mempool_reverts_the_replaced_transfer(node, watching, tap):
    address = watching(node)
    original = node.pay(address, AMOUNT)
    tap.wait_for("transfer_seen", txid=original, block_height=None)
    replacement = node.bump(original)
    reverted = tap.wait_for("transfer_reverted", txid=original)
    seen = tap.wait_for("transfer_seen", txid=replacement, block_height=None)
    assert (reverted["amount"], seen["amount"]) == (AMOUNT, AMOUNT)
    assert reverted["sequence"] != seen["sequence"]
    node.mine(2)
    tap.wait_for("transfer_confirmed", txid=replacement, confirmations=2)
    assert [e["type"] for e in tap.transfers(original)] == ["transfer_seen", "transfer_reverted"]


def test_jai_paye_finds_a_payment_the_scans_missed(node, fake_payments, start_watcher, report, tap, watcher_db, wait):
    start_watcher()
    address = node.new_address()  # payments never announced it: the scans do not look for it
    in_block = node.pay(address, AMOUNT)
    node.mine(1)
    paid_at = node.height()
    wait(lambda: watcher_db.cursor_height() == paid_at, what="the watcher to scan the block")
    in_mempool = node.pay(address, AMOUNT + 1)
    eventlet.sleep(0.3)
    assert tap.transfers() == []
    watch = {"address": address, "payment_id": "p1", "token": None, "required_confirmations": 2}
    fake_payments.watched.append({**watch, "network": node.network, "watch_until": "2999-01-01T00:00:00Z"})
    report(address.upper())
    seen = tap.wait_for("transfer_seen", txid=in_block)
    assert (seen["block_height"], seen["confirmations"], seen["amount"]) == (paid_at, 1, AMOUNT)
    assert tap.wait_for("transfer_seen", txid=in_mempool)["block_height"] is None
    node.mine(1)  # now watched: the scans count it
    tap.wait_for("transfer_confirmed", txid=in_block, confirmations=2)
    tap.wait_for("transfer_confirmations", txid=in_mempool, confirmations=1)


def test_the_nodes_long_poll_wakes_the_scan_without_polling(
    node, fake_payments, start_watcher, announce, tap, watcher_db, wait
):
    """The node's own `waitforblockheight`, without ZMQ (Debian's litecoind has none)."""
    start_watcher(poll_interval_s=60, **{f"{node.network}_zmq_url": ""})
    wait(lambda: watcher_db.cursor_height() == node.height(), what="the first pass")
    address = node.new_address()
    announce(address)
    wait(lambda: address in watcher_db.watched(), what="the address")
    txid = node.pay(address, AMOUNT)
    node.mine(1)
    tap.wait_for("transfer_seen", seconds=5, txid=txid, block_height=node.height())  # the poll is a minute away
    node.mine(1)
    tap.wait_for("transfer_confirmed", seconds=5, txid=txid, confirmations=2)


def test_the_standby_takes_over_a_killed_active_replica_without_missing_or_repeating(
    node, fake_payments, announce, tap, watcher_db, takeover, wait
):
    takeover.start()
    addresses = [node.new_address() for _ in range(12)]
    for address in addresses:
        announce(address)
    wait(lambda: set(addresses) <= watcher_db.watched(), what="the addresses")
    start = node.height()
    takeover.hold_at(UtxoClient, start + len(addresses) // 2)
    payments = {}
    for address in addresses:
        txid = node.pay(address, AMOUNT)
        payments[(txid, node.output_index(txid, address))] = address
        node.mine(1)
    takeover.kill_the_active(start)
    node.mine(2)
    for txid, index in payments:
        tap.wait_for("transfer_confirmed", txid=txid, index=index)
    tap.wait_for("watcher_status", scanned_height=node.height())

    transfers = tap.distinct_transfers()
    for key in payments:
        kinds = [e["type"] for e in transfers if (e["txid"], e["index"]) == key]
        assert kinds.count("transfer_seen") == 1, (key, kinds)
        assert kinds.count("transfer_confirmed") == 1, (key, kinds)
        assert "transfer_reverted" not in kinds
    assert {(e["txid"], e["index"]) for e in transfers} == set(payments)
    assert set(range(start + 1, node.height() + 1)) <= set(watcher_db.scanned_heights())
