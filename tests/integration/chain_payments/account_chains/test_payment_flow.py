"""From an order's payment instructions to `paid` on Ethereum (ETH, USDT), Tron (TRX, USDT) and Solana (SOL):
the node's own API pays, the watcher reports, payments settles. The payments run once per method; the
scenarios about the chain and the watcher (restart, late watch, reorg, outage, standby) once per network, their
code being the same for a chain's coin and its tokens.

189 USD is 0.0756 ETH at the rates file's 2,500 USD/ETH, 189 USDT, 756 TRX at 0.25 USD/TRX, and 1.26 SOL at
150 USD/SOL. Two confirmations are required.
"""

import pytest

from kernodeck_kit.types import utcnow

# ETH and USDT on Ethereum (TRX and USDT on Tron) share the chain's code: one method per network.
once_per_network = pytest.mark.parametrize(
    "method", [("ETH", "ethereum"), ("USDT", "tron"), ("SOL", "solana")], indirect=True, ids=lambda m: m[1]
)


def test_an_exact_payment_makes_the_order_paid(chain, shop, start_watcher, watching, wait):
    watcher = start_watcher()
    order, payment = shop.order_payment()
    watching(watcher, payment)
    amount = payment["amount_base_units"]
    txid = chain.pay(payment, amount)
    wait(lambda: shop.payment(payment)["status"] == "confirming", what="one confirmation")
    assert shop.order_status(order) == "awaiting_payment"
    chain.mine(1)
    shop.wait_paid(order)
    (transfer,) = shop.payment(payment)["transfers"]
    assert (transfer["txid"], transfer["amount_base_units"], transfer["state"]) == (txid, amount, "confirmed")
    assert chain.balance(payment) == amount


@once_per_network
def test_the_node_announcing_the_confirming_block_wakes_the_watcher(chain, shop, start_watcher, watching, wait):
    """anvil's newHeads, the Tron node's ZMQ `block` topic, Solana's slotSubscribe: the poll is minutes away."""
    watcher = start_watcher(poll_interval_s=300)
    order, payment = shop.order_payment()
    watching(watcher, payment)
    chain.pay(payment, payment["amount_base_units"])
    wait(lambda: shop.payment(payment)["status"] == "confirming", seconds=5, what="one confirmation")
    chain.mine(1)
    shop.wait_paid(order, seconds=5)


def test_two_partial_payments_add_up(chain, shop, start_watcher, watching, wait):
    watcher = start_watcher()
    order, payment = shop.order_payment()
    watching(watcher, payment)
    amount = payment["amount_base_units"]
    first = chain.pay(payment, amount // 3)
    chain.mine(1)
    wait(lambda: shop.payment(payment)["confirmed_base_units"] == amount // 3, what="the first part confirmed")
    assert shop.order_status(order) == "awaiting_payment"
    second = chain.pay(payment, amount - amount // 3)
    chain.mine(1)
    shop.wait_paid(order)
    transfers = {t["txid"]: t for t in shop.payment(payment)["transfers"]}
    assert {txid: t["state"] for txid, t in transfers.items()} == {first: "confirmed", second: "confirmed"}
    assert chain.balance(payment) == amount


@once_per_network
def test_a_payment_made_while_the_watcher_is_down_is_found_after_the_restart(
    chain, shop, start_watcher, watching, watcher_db, wait
):
    watcher = start_watcher()
    order, payment = shop.order_payment()
    watching(watcher, payment)
    scanned_before = wait(watcher_db.cursor_height, what="a first pass")
    watcher.kill()
    chain.mine(2)
    txid = chain.pay(payment, payment["amount_base_units"])
    chain.mine(2)
    start_watcher()
    shop.wait_paid(order)
    assert [t["txid"] for t in shop.payment(payment)["transfers"]] == [txid]
    tip = chain.height()
    wait(lambda: watcher_db.cursor_height() == tip, what="the watcher to reach the tip")
    assert set(range(scanned_before, tip + 1)) <= set(watcher_db.scanned_heights())


@once_per_network
def test_a_payment_mined_before_the_watcher_knew_the_address_is_found_when_the_watch_comes(
    chain, shop, start_watcher, watching, runtime, watcher_db, wait
):
    watcher = start_watcher()
    order, payment = shop.order_payment()
    watching(watcher, payment)
    address = chain.normalize(payment["address"])
    # As if the address_watched event had not come yet: no row, not in the active replica's set.
    watchlist = runtime(watcher).watchlist
    (watch,) = watcher_db.rows(
        "DELETE FROM watched_addresses WHERE network = :network AND address = :address RETURNING *", address=address
    )
    deleted_at = utcnow()  # a pass that read the rows before the delete would take the address back
    wait(lambda: watchlist.synced_at > deleted_at, what="the watcher to read its watches after the delete")
    watchlist.drop(address)
    txid = chain.pay(payment, payment["amount_base_units"])
    chain.mine(1)
    tip = chain.height()
    wait(lambda: watcher_db.cursor_height() >= tip, what="the watcher to scan the payment's block")
    assert shop.payment(payment)["transfers"] == []
    watcher_db.rows(  # the event comes, and a replica writes the watch
        "INSERT INTO watched_addresses (network, address, payment_id, token, watch_until, required_confirmations,"
        " added_at) VALUES (:network, :address, :payment_id, :token, :watch_until, :required, now()) RETURNING address",
        address=address,
        payment_id=watch["payment_id"],
        token=watch["token"],
        watch_until=watch["watch_until"],
        required=watch["required_confirmations"],
    )
    shop.wait_paid(order)
    assert [t["txid"] for t in shop.payment(payment)["transfers"]] == [txid]


@once_per_network
def test_a_reorg_that_drops_the_payment_withdraws_it_and_the_order_stays_unpaid(
    chain, shop, start_watcher, watching, tap, wait
):
    watcher = start_watcher()
    order, payment = shop.order_payment()
    watching(watcher, payment)
    txid = chain.pay(payment, payment["amount_base_units"])
    wait(lambda: shop.payment(payment)["status"] == "confirming", what="one confirmation")
    chain.drop(txid)  # the payment's block is orphaned; the new one does not hold it
    chain.mine(3)
    tap.wait_for("transfer_reverted", txid=txid)
    tap.wait_for("watcher_status", scanned_height=chain.height())
    wait(lambda: shop.payment(payment)["transfers"][0]["state"] == "reverted", what="payments to withdraw it")
    assert shop.payment(payment)["received_base_units"] == 0
    assert shop.payment(payment)["status"] == "awaiting_transfer"
    assert shop.order_status(order) == "awaiting_payment"
    assert [e["type"] for e in tap.transfers(txid)] == ["transfer_seen", "transfer_reverted"]
    assert not tap.events("transfer_confirmed")
    assert chain.balance(payment) == 0


@once_per_network
def test_a_node_outage_makes_the_method_unavailable_then_nothing_is_missed(
    chain, shop, start_watcher, watching, tap, watcher_db, wait
):
    watcher = start_watcher()
    wait(lambda: shop.method()["available"], what="the watcher's first report")
    order, payment = shop.order_payment()
    watching(watcher, payment)
    txid = chain.pay(payment, payment["amount_base_units"])
    paid_at = chain.height()
    chain.stop()
    try:
        tap.wait_for("watcher_status", lagging=True)
        wait(lambda: shop.method()["reason"] == "chain_lagging", what="payments to stop offering the method")
        chain.mine_while_stopped(3)
        assert shop.order_status(order) == "awaiting_payment"
    finally:
        chain.restart()
    chain.mine(1)
    shop.wait_paid(order)
    assert [t["txid"] for t in shop.payment(payment)["transfers"]] == [txid]
    wait(lambda: shop.method()["available"], what="the method to come back")
    tip = chain.height()
    wait(lambda: watcher_db.cursor_height() == tip, what="the watcher to reach the tip")
    assert set(range(paid_at, tip + 1)) <= set(watcher_db.scanned_heights())


PAYMENTS = 6  # one block each (two on Solana); the active replica is killed while scanning the middle one


@once_per_network
def test_the_standby_takes_over_a_killed_active_replica_without_missing_or_repeating(
    chain, shop, watching, tap, watcher_db, takeover
):
    takeover.start()
    intents = [shop.order_payment() for _ in range(PAYMENTS)]
    for _, payment in intents:
        watching(takeover.active, payment)
    start = chain.height()
    blocks_per_payment = 2 if chain.network == "solana" else 1
    takeover.hold_at(chain.client_class, start + blocks_per_payment * (PAYMENTS // 2))
    paid = {chain.pay(payment, payment["amount_base_units"]): payment for _, payment in intents}
    takeover.kill_the_active(start)
    chain.mine(1)
    for txid in paid:
        tap.wait_for("transfer_confirmed", txid=txid)
    for order, _ in intents:
        shop.wait_paid(order)
    tap.wait_for("watcher_status", scanned_height=chain.height())

    transfers = tap.distinct_transfers()
    for txid in paid:
        kinds = [e["type"] for e in transfers if e["txid"] == txid]
        assert kinds == ["transfer_seen", "transfer_confirmed"], (txid, kinds)
    assert {e["txid"] for e in transfers} == set(paid)
    for txid, payment in paid.items():
        assert [t["txid"] for t in shop.payment(payment)["transfers"]] == [txid]
    assert set(range(start + 1, chain.height() + 1)) <= set(watcher_db.scanned_heights())


@pytest.mark.parametrize("method", [("USDT", "ethereum"), ("USDT", "tron")], indirect=True, ids=lambda m: m[1])
def test_a_token_with_the_usdt_symbol_from_another_contract_goes_to_review_and_never_counts(
    chain, shop, start_watcher, watching, tap, wait
):
    watcher = start_watcher()
    order, payment = shop.order_payment()
    watching(watcher, payment)
    amount = payment["amount_base_units"]
    fake = chain.pay_fake_usdt(payment, amount)
    chain.mine(1)
    confirmed = tap.wait_for("transfer_confirmed", txid=fake)
    assert confirmed["token"] == chain.normalize(chain.fake_usdt) != chain.normalize(chain.usdt)
    review = wait(lambda: next((r for r in shop.reviews() if r["reason"] == "wrong_asset"), None), what="a review item")
    assert (review["payment_id"], review["transfer_key"]) == (
        payment["id"],
        f"{chain.network}:{fake}:{confirmed['index']}",
    )
    view = shop.payment(payment)
    assert (view["transfers"], view["received_base_units"], view["status"]) == ([], 0, "in_review")
    assert shop.order_status(order) == "awaiting_payment"

    real = chain.pay(payment, amount)  # the real USDT still pays the order
    chain.mine(1)
    shop.wait_paid(order)
    assert [t["txid"] for t in shop.payment(payment)["transfers"]] == [real]
    assert [r["reason"] for r in shop.reviews()] == ["wrong_asset"]


@pytest.mark.parametrize("method", [("ETH", "ethereum")], indirect=True, ids=lambda m: m[1])
def test_eth_sent_by_a_contract_makes_the_order_paid(chain, shop, start_watcher, watching, tap, wait):
    watcher = start_watcher()
    order, payment = shop.order_payment()
    watching(watcher, payment)
    amount = payment["amount_base_units"]
    txid = chain.forward(payment, amount)  # the Forwarder sends it on in an internal call
    chain.mine(1)
    shop.wait_paid(order)
    (transfer,) = shop.payment(payment)["transfers"]
    assert (transfer["txid"], transfer["index"], transfer["amount_base_units"]) == (txid, -1, amount)
    assert chain.balance(payment) == amount
