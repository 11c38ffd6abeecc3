"""What a customer is told about a crypto payment, on the real broker: its instructions, then each status once."""

from datetime import timedelta

from kernodeck_contracts.events import TransferConfirmations, TransferSeen
from services.payments.tests.helpers import confirm, now, run_entrypoint, transfer_fields, txid

ACC = "acc1"
BTC_AMOUNT = 378_000  # 189 USD at 50,000 USD/BTC


def moves(payments_events, payment_id: str, count: int) -> list[tuple]:
    told = payments_events.wait_for("payment_status_changed", count)
    return [
        (e["previous_status"], e["status"], e["confirmations"], e["required_confirmations"])
        for e in told
        if e["payment_id"] == payment_id
    ]


def test_each_status_a_payment_reaches_is_told_once_with_its_confirmations(
    payments_ready, new_order, watcher, payments_events
):
    order = new_order(ACC)
    payment = payments_ready.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    [told] = payments_events.wait_for("payment_instructions_created", 1)
    assert (told["payment_id"], told["order_id"], told["amount"], told["amount_usd_cents"]) == (
        payment["id"],
        order["id"],
        "0.00378",
        18_900,
    )
    tx = txid()
    watcher.send(TransferSeen, **transfer_fields(payment, BTC_AMOUNT, tx=tx))
    in_block = transfer_fields(payment, BTC_AMOUNT, tx=tx, block_height=100)
    watcher.send(TransferConfirmations, **in_block, confirmations=1)
    watcher.send(TransferConfirmations, **in_block, confirmations=1)  # nothing moved: nothing told
    confirm(watcher, payment, BTC_AMOUNT, tx=tx)

    assert moves(payments_events, payment["id"], 3) == [
        ("awaiting_transfer", "seen", 0, 2),
        ("seen", "confirming", 1, 2),
        ("confirming", "settled", 2, 2),
    ]
    payments_events.wait_for("payment_settled", 1)
    assert len(payments_events.of("payment_status_changed")) == 3


def test_an_intent_that_expires_is_told_once(payments_ready, new_order, running, payments_db, payments_events):
    order = new_order(ACC)
    payment = payments_ready.create_order_payment(ACC, order["id"], "BTC", "bitcoin")
    payments_db.move_deadline(payment["id"], now() - timedelta(seconds=1))

    assert run_entrypoint(running["payments"], "sweep") == 1
    assert run_entrypoint(running["payments"], "sweep") == 0

    assert moves(payments_events, payment["id"], 1) == [("awaiting_transfer", "expired", 0, 2)]
