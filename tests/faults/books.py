"""The books after a fault: every transfer credited once or in review, the ledger whole, no event left unsent.

Read straight from the services' databases, the way an auditor would: the
chain transfers and the ledger in payments', the order timeline in orders',
the outbox of every service.
"""

import time
from dataclasses import dataclass, field

from sqlalchemy import text

from kernodeck_kit.db import make_engine

BALANCE_REASONS = ("topup", "overpayment", "underpayment", "late_transfer", "review_credit")


@dataclass(frozen=True)
class Sent:
    txid: str
    purpose: str  # "order" or "topup"
    reference: str  # the order's or the top-up's id
    intent: str  # the payment's id


@dataclass
class Tally:
    scenario: str
    sent: int = 0
    credited_once: int = 0
    in_review: int = 0
    lost: int = 0
    double: int = 0
    seconds: float = 0.0
    faults: list[str] = field(default_factory=list)

    COLUMNS = ("scenario", "transfers sent", "credited once", "in review", "lost", "double", "seconds")

    @staticmethod
    def table(rows: list["Tally"]) -> list[str]:
        lines = ["| " + " | ".join(Tally.COLUMNS) + " |", "|" + "---|" * len(Tally.COLUMNS)]
        for row in rows:
            values = (
                row.scenario,
                row.sent,
                row.credited_once,
                row.in_review,
                row.lost,
                row.double,
                f"{row.seconds:.0f}",
            )
            lines.append("| " + " | ".join(map(str, values)) + " |")
        return lines


def query(url: str, sql: str, **params) -> list[tuple]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql), params)]
    finally:
        engine.dispose()


def outcome(databases: dict[str, str], sent: Sent) -> str:
    """ "credited", "review", "double" or "lost" (not or not yet credited) for one transfer sent."""
    payments, orders = databases["payments"], databases["orders"]
    dispositions = [
        d for (d,) in query(payments, "SELECT disposition FROM chain_transfers WHERE txid = :t", t=sent.txid)
    ]
    if sent.purpose == "order":
        [(booked,)] = query(
            payments,
            "SELECT count(*) FILTER (WHERE reason = 'order_payment') - count(*) FILTER (WHERE reason = 'refused_payment')"
            " FROM ledger_entries WHERE ref = :o",
            o=sent.reference,
        )
        [(paid,)] = query(
            orders, "SELECT count(*) FROM order_timeline WHERE order_id = :o AND kind = 'paid'", o=sent.reference
        )
        if booked > 1 or paid > 1:
            return "double"
        credited = dispositions == ["settlement"] and booked == 1 and paid == 1
    else:
        [(booked,)] = query(
            payments,
            "SELECT count(*) FROM ledger_entries WHERE ref = :i AND reason = ANY(:reasons)",
            i=sent.intent,
            reasons=list(BALANCE_REASONS),
        )
        if booked > 1:
            return "double"
        credited = len(dispositions) == 1 and dispositions[0] in ("settlement", "credited") and booked == 1
    if credited:
        return "credited"
    [(reviews,)] = query(payments, "SELECT count(*) FROM review_items WHERE intent_id = :i", i=sent.intent)
    return "review" if reviews or "review" in dispositions else "lost"


def describe(databases: dict[str, str], sent: Sent) -> str:
    """Where one transfer's payment stands, for a failure's message."""
    payments = databases["payments"]
    transfers = query(
        payments, "SELECT state, confirmations, disposition FROM chain_transfers WHERE txid = :t", t=sent.txid
    )
    intent = query(payments, "SELECT status, settled_at FROM payment_intents WHERE id = :i", i=sent.intent)
    ledger = query(
        payments,
        "SELECT reason, amount_cents FROM ledger_entries WHERE ref IN (:i, :r)",
        i=sent.intent,
        r=sent.reference,
    )
    order = query(databases["orders"], "SELECT status FROM orders WHERE id = :r", r=sent.reference)
    return f"{sent}: transfers {transfers}, intent {intent}, ledger {ledger}, order {order}"


def ledger_faults(payments_url: str) -> list[str]:
    """What is wrong with the ledger: entries that do not sum to zero, a balance below zero or unlike its entries."""
    faults = []
    [(total,)] = query(
        payments_url,
        "SELECT coalesce(sum(amount), 0) FROM ("
        " SELECT credit_account AS account, amount_cents AS amount FROM ledger_entries"
        " UNION ALL SELECT debit_account, -amount_cents FROM ledger_entries) moves",
    )
    if total != 0:
        faults.append(f"the ledger sums to {total}")
    per_customer = dict(
        query(
            payments_url,
            "SELECT account, sum(amount) FROM ("
            " SELECT credit_account AS account, amount_cents AS amount FROM ledger_entries"
            " UNION ALL SELECT debit_account, -amount_cents FROM ledger_entries) moves"
            " WHERE account LIKE 'customer:%' GROUP BY account",
        )
    )
    faults += [f"{account} is at {cents} in the ledger" for account, cents in per_customer.items() if cents < 0]
    for customer, available in query(payments_url, "SELECT customer_id, available_cents FROM balances"):
        if available < 0 or available != per_customer.get(f"customer:{customer}", 0):
            faults.append(f"balance of {customer}: {available}, ledger {per_customer.get(f'customer:{customer}', 0)}")
    return faults


def orders_paid_twice(databases: dict[str, str]) -> list[str]:
    twice = query(
        databases["orders"],
        "SELECT order_id FROM order_timeline WHERE kind = 'paid' GROUP BY order_id HAVING count(*) > 1",
    )
    twice += query(
        databases["payments"],
        "SELECT ref FROM ledger_entries GROUP BY ref HAVING"
        " count(*) FILTER (WHERE reason = 'order_payment') - count(*) FILTER (WHERE reason = 'refused_payment') > 1",
    )
    return [order_id for (order_id,) in twice]


def unsent(databases: dict[str, str]) -> dict[str, int]:
    counts = {
        name: query(url, "SELECT count(*) FROM outbox WHERE sent_at IS NULL")[0][0] for name, url in databases.items()
    }
    return {name: count for name, count in counts.items() if count}


def audit(databases: dict[str, str], scenario: str, sent: list[Sent], started: float, settle_s: float = 90) -> Tally:
    """Wait (up to `settle_s`) for every transfer to be credited or in review and every outbox to be empty, then
    check the books; the tally, with the failures asserted by the caller."""
    deadline = time.monotonic() + settle_s
    while True:
        outcomes = [outcome(databases, s) for s in sent]
        pending = unsent(databases)
        settled = all(o in ("credited", "review", "double") for o in outcomes) and not pending
        if settled or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    tally = Tally(
        scenario,
        sent=len(sent),
        credited_once=outcomes.count("credited"),
        in_review=outcomes.count("review"),
        lost=outcomes.count("lost"),
        double=outcomes.count("double"),
        seconds=time.monotonic() - started,
    )
    tally.faults = [
        *(describe(databases, s) for s, o in zip(sent, outcomes, strict=True) if o in ("lost", "double")),
        *ledger_faults(databases["payments"]),
        *(f"order {o} paid twice" for o in orders_paid_twice(databases)),
        *(f"{n}: {c} outbox rows unsent" for n, c in pending.items()),
    ]
    return tally
