import eventlet

from kernodeck_contracts.events import TransferConfirmed


def wait_until(predicate, seconds=10.0):
    with eventlet.Timeout(seconds):
        while not predicate():
            eventlet.sleep(0.05)


def test_an_exact_payment_makes_the_order_paid(payments, orders, chain):
    order = orders.create_order("acc1", "h100", 3, 1, "ubuntu")
    payment = payments.create_order_payment("acc1", order["id"], "BTC", "bitcoin")
    assert payment["address"] == "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"
    assert payment["amount"] == "0.00378"
    chain(
        TransferConfirmed,
        network="bitcoin",
        txid="aa" * 32,
        index=0,
        address=payment["address"],
        amount=payment["amount_base_units"],
        confirmations=2,
        block_height=100,
    )
    wait_until(lambda: orders.get_order("acc1", order["id"])["status"] == "paid")
    assert payments.get_payment("acc1", payment["id"])["status"] == "settled"
