"""From an order's payment instructions to `paid`: the node's own wallet pays, the watcher reports, payments settles.

189 USD at the rates file's 50,000 USD/BTC is 378,000 satoshi; at 100 USD/LTC, 189,000,000 litoshi.
"""

from kernodeck_kit.testing import truncate_all
from services.payments.tests.helpers import Chain, report_watchers


def test_an_exact_payment_makes_the_order_paid(node, shop, start_watcher, wait):
    start_watcher()
    order, payment = shop.order_payment()
    amount = payment["amount_base_units"]
    txid = node.pay(payment["address"], amount)
    wait(lambda: shop.payment(payment)["status"] == "seen", what="the payment to be seen in the mempool")
    node.mine(1)
    wait(lambda: shop.payment(payment)["status"] == "confirming", what="one confirmation")
    assert shop.order_status(order) == "awaiting_payment"
    node.mine(1)
    shop.wait_paid(order)
    (transfer,) = shop.payment(payment)["transfers"]
    assert (transfer["txid"], transfer["amount_base_units"], transfer["state"]) == (txid, amount, "confirmed")


def test_two_partial_payments_add_up(node, shop, start_watcher, wait):
    start_watcher()
    order, payment = shop.order_payment()
    amount = payment["amount_base_units"]
    first = node.pay(payment["address"], amount // 3)
    node.mine(2)
    wait(lambda: shop.payment(payment)["confirmed_base_units"] == amount // 3, what="the first part confirmed")
    assert shop.order_status(order) == "awaiting_payment"
    second = node.pay(payment["address"], amount - amount // 3)
    node.mine(2)
    shop.wait_paid(order)
    transfers = {t["txid"]: t for t in shop.payment(payment)["transfers"]}
    assert {txid: t["state"] for txid, t in transfers.items()} == {first: "confirmed", second: "confirmed"}


def test_an_address_created_before_the_watcher_first_ran_is_watched(node, shop, stack, start_watcher, watcher_db, wait):
    # Payments offers a network only once a watcher has reported on it: here one did (a replica since gone), and
    # the watcher now started runs for the first time, on an empty database.
    report_watchers(Chain(stack["payments"]), shop.network)
    order, payment = shop.order_payment()  # its address_watched event reaches no watcher queue yet
    start_watcher(start_height=node.height())  # an empty database while addresses are watched: the operator says
    wait(lambda: watcher_db.cursor_height() == node.height(), what="the first pass")
    assert payment["address"] in watcher_db.watched()  # asked of payments at start
    node.pay(payment["address"], payment["amount_base_units"])
    node.mine(2)
    shop.wait_paid(order)


def test_a_payment_made_while_the_watcher_is_down_is_found_after_the_restart(
    node, shop, start_watcher, watcher_db, wait
):
    watcher = start_watcher()
    order, payment = shop.order_payment()
    wait(lambda: payment["address"] in watcher_db.watched(), what="the watcher to know the address")
    scanned_before = wait(watcher_db.cursor_height, what="a first pass")
    watcher.stop()
    node.mine(2)
    node.pay(payment["address"], payment["amount_base_units"])
    node.mine(3)
    start_watcher()
    shop.wait_paid(order)
    tip = node.height()
    wait(lambda: watcher_db.cursor_height() == tip, what="the watcher to reach the tip")
    assert set(range(scanned_before, tip + 1)) <= set(watcher_db.scanned_heights())


def test_a_reorg_that_drops_the_payment_withdraws_it_and_the_order_stays_unpaid(node, shop, start_watcher, tap, wait):
    start_watcher()
    order, payment = shop.order_payment()
    txid = node.pay(payment["address"], payment["amount_base_units"])
    (block,) = node.mine(1)
    wait(lambda: shop.payment(payment)["status"] == "confirming", what="one confirmation")
    node.invalidate(block)  # the payment goes back to the mempool...
    replacement = node.double_spend(txid)  # ...where a double spend that pays the wallet replaces it
    node.mine(3)
    tap.wait_for("transfer_reverted", txid=txid)
    wait(lambda: node.rpc("getrawtransaction", replacement, True).get("confirmations") == 3, what="the replacement")
    tap.wait_for("watcher_status", scanned_height=node.height())
    wait(lambda: shop.payment(payment)["transfers"][0]["state"] == "reverted", what="payments to withdraw it")
    assert shop.payment(payment)["received_base_units"] == 0
    assert shop.payment(payment)["status"] == "awaiting_transfer"
    assert shop.order_status(order) == "awaiting_payment"
    assert tap.transfers(txid)[-1]["type"] == "transfer_reverted"
    assert not tap.events("transfer_confirmed")


def test_a_node_outage_makes_the_method_unavailable_then_nothing_is_missed(
    node, shop, start_watcher, tap, watcher_db, wait
):
    start_watcher()
    wait(lambda: shop.method()["available"], what="the watcher's first report")
    order, payment = shop.order_payment()
    node.pay(payment["address"], payment["amount_base_units"])
    node.mine(1)
    node.stop()
    try:
        tap.wait_for("watcher_status", lagging=True)
        wait(lambda: shop.method()["reason"] == "chain_lagging", what="payments to stop offering the method")
    finally:
        node.restart()
    node.mine(1)
    shop.wait_paid(order)
    wait(lambda: shop.method()["available"], what="the method to come back")
    tip = node.height()
    wait(lambda: watcher_db.cursor_height() == tip, what="the watcher to reach the tip")
    assert set(range(tip - 2, tip + 1)) <= set(watcher_db.scanned_heights())


def test_the_watcher_database_replaced_mid_confirmation_still_completes_the_payment(
    node, shop, start_watcher, watcher_database, watcher_db, tap, wait
):
    watcher = start_watcher()
    order, payment = shop.order_payment()
    node.pay(payment["address"], payment["amount_base_units"])
    node.mine(1)
    paid_at = node.height()
    wait(lambda: shop.payment(payment)["status"] == "confirming", what="one confirmation")
    watcher.stop()
    truncate_all(watcher_database)  # a new database: its event sequence starts again at 1
    refused = start_watcher()  # the payment's block is below the tip it would start from: it refuses
    tap.wait_for("watcher_status", lagging=True)
    assert watcher_db.cursor_height() is None
    refused.stop()
    start_watcher(start_height=paid_at)  # the operator names the height
    node.mine(1)
    shop.wait_paid(order)
