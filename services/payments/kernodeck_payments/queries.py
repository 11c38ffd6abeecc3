"""Read-side helpers: payments, top-ups and watched addresses as the RPC returns them."""

from datetime import datetime

from sqlalchemy import select

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.outbox import Store
from kernodeck_kit.paging import Page
from kernodeck_kit.types import rfc3339
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.reconcile import topup_key
from kernodeck_payments.ledger.store import booked_under
from kernodeck_payments.store.intents import get_intent, intents_for, topups_of, transfers_by_intent
from kernodeck_payments.store.tables import PaymentIntent
from kernodeck_payments.views import payment_view, topup_view


def payment(db: Store, settings: PaymentsSettings, payment_id: str, account_id: str) -> dict:
    with db.read() as session:
        intent = get_intent(session, payment_id)
        # Another customer's payment gets the same answer as a missing one.
        if intent is None or intent.account_id != account_id:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such payment")
        transfers = transfers_by_intent(session, [intent.id])[intent.id]
        return payment_view(intent, transfers, settings.ethereum_chain_id)


def payments_for(db: Store, settings: PaymentsSettings, account_id: str, reference_id: str) -> list[dict]:
    return payments_for_many(db, settings, account_id, [reference_id])[reference_id]


def payments_for_many(db: Store, settings: PaymentsSettings, account_id: str, reference_ids: list[str]) -> dict:
    """{reference id: its payments, newest first}, in one read for a whole list of orders."""
    with db.read() as session:
        intents = intents_for(session, account_id, reference_ids)
        transfers = transfers_by_intent(session, [i.id for i in intents])
        found: dict[str, list[dict]] = {reference_id: [] for reference_id in reference_ids}
        for intent in intents:
            found[intent.reference_id].append(payment_view(intent, transfers[intent.id], settings.ethereum_chain_id))
        return found


def topups(db: Store, settings: PaymentsSettings, account_id: str, page: Page) -> dict:
    """{"items": a page of the account's top-ups, newest first, "next_cursor"}."""
    with db.read() as session:
        pairs = topups_of(session, account_id, page)
        transfers = transfers_by_intent(session, [intent.id for _, intent in pairs])
        credited = booked_under(session, [topup_key(intent.id) for _, intent in pairs])

        def view(pair) -> dict:
            topup, intent = pair
            payment = payment_view(intent, transfers[intent.id], settings.ethereum_chain_id)
            return topup_view(topup, payment, credited.get(topup_key(intent.id)))

        return page.answer(pairs, lambda pair: (pair[0].created_at, pair[0].id), view)


def watched(db: Store, network: str, now: datetime, after: str | None, limit: int) -> dict:
    """One page of the addresses a network's watcher must look at: intents still inside their monitoring window.

    Pages follow the intent id; `next` is the `after` of the next page, None after the last.
    """
    with db.read() as session:
        query = select(PaymentIntent).where(PaymentIntent.network == network, PaymentIntent.watch_until > now)
        if after:
            query = query.where(PaymentIntent.id > after)
        rows = list(session.execute(query.order_by(PaymentIntent.id).limit(limit)).scalars())
        return {
            "addresses": [
                {
                    "address": row.address,
                    "payment_id": row.id,
                    "token": row.token,
                    "watch_until": rfc3339(row.watch_until),
                    "required_confirmations": row.required_confirmations,
                }
                for row in rows
            ],
            "next": rows[-1].id if len(rows) == limit else None,
        }
