"""Read-side helpers: payments, top-ups, the balance, methods and watched addresses as the RPC returns them."""

from datetime import datetime

from sqlalchemy import or_, select
from sqlmodel import Session

from kernodeck_contracts.errors import ErrorCode, ServiceError
from kernodeck_kit.outbox import Store
from kernodeck_kit.paging import Page
from kernodeck_kit.types import rfc3339
from kernodeck_payments.availability import load_board, watcher_reports
from kernodeck_payments.config import PaymentsSettings
from kernodeck_payments.domain.methods import METHODS, Method
from kernodeck_payments.domain.reconcile import topup_key
from kernodeck_payments.ledger.domain import customer_account
from kernodeck_payments.ledger.store import LedgerEntryRow, available_cents, booked_under, list_entries
from kernodeck_payments.store.intents import (
    get_intent,
    intent_of,
    intents_for,
    pending_topup_cents,
    topup_of,
    topups_of,
    transfer_of,
    transfers_by_intent,
)
from kernodeck_payments.store.tables import ChainTransferRow, PaymentIntentRow, ReviewItemRow, TopupRow
from kernodeck_payments.views import payment_view, topup_view

WATCHED_PAGE = 5000  # addresses per answer: a million of them would not fit one AMQP message


def payment(db: Store, settings: PaymentsSettings, payment_id: str, account_id: str) -> dict:
    with db.read() as session:
        intent = get_intent(session, payment_id)
        # Another customer's payment gets the same answer as a missing one.
        if intent is None or intent.account_id != account_id:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such payment")
        return _payment_view(session, settings, intent)


def payments_for(db: Store, settings: PaymentsSettings, account_id: str, reference_id: str) -> list[dict]:
    return payments_for_many(db, settings, account_id, [reference_id])[reference_id]


def payments_for_many(db: Store, settings: PaymentsSettings, account_id: str, reference_ids: list[str]) -> dict:
    """{reference id: its payments, newest first}, in one read for a whole list of orders."""
    with db.read() as session:
        intents = intents_for(session, account_id, reference_ids)
        transfers = transfers_by_intent(session, [i.id for i in intents])
        found: dict[str, list[dict]] = {reference_id: [] for reference_id in reference_ids}
        for intent in intents:
            found[intent.reference_id].append(_view(settings, intent, transfers[intent.id]))
        return found


def topups(db: Store, settings: PaymentsSettings, account_id: str, page: Page) -> dict:
    """{"items": a page of the account's top-ups, newest first, "next_cursor"}."""
    with db.read() as session:
        pairs = topups_of(session, account_id, page)
        transfers = transfers_by_intent(session, [intent.id for _, intent in pairs])
        credited = booked_under(session, [topup_key(intent.id) for _, intent in pairs])

        def view(pair) -> dict:
            topup, intent = pair
            return topup_view(
                topup_of(topup), _view(settings, intent, transfers[intent.id]), credited.get(topup_key(intent.id))
            )

        return page.answer(pairs, lambda pair: (pair[0].created_at, pair[0].id), view)


def topup(db: Store, settings: PaymentsSettings, account_id: str, topup_id: str) -> dict:
    """One of the account's top-ups with its payment; another customer's gets the same answer as a missing one."""
    with db.read() as session:
        found = session.execute(
            select(TopupRow, PaymentIntentRow)
            .join(PaymentIntentRow, PaymentIntentRow.reference_id == TopupRow.id)
            .where(TopupRow.id == topup_id, TopupRow.account_id == account_id)
        ).first()
        if found is None:
            raise ServiceError(ErrorCode.NOT_FOUND, "no such top-up")
        row, intent = found
        credited = booked_under(session, [topup_key(intent.id)]).get(topup_key(intent.id))
        return topup_view(topup_of(row), _payment_view(session, settings, intent), credited)


def _payment_view(session: Session, settings: PaymentsSettings, intent: PaymentIntentRow) -> dict:
    return _view(settings, intent, transfers_by_intent(session, [intent.id])[intent.id])


def _view(settings: PaymentsSettings, intent: PaymentIntentRow, transfers: list[ChainTransferRow]) -> dict:
    return payment_view(intent_of(intent), [transfer_of(t) for t in transfers], settings.ethereum_chain_id)


def outcomes(db: Store, account_id: str, payment_ids: list[str]) -> dict[str, dict]:
    """What became of each of the account's payments beyond paying what it was for, by payment id: the balance
    credits it brought (an excess, a short or late transfer, a payment given back, an operator's credit after a
    check) and the checks it went to, each {"at", "amount_usd_cents", "reason"} and {"status", "decision"}."""
    found = {payment_id: {"credits": [], "reviews": []} for payment_id in payment_ids}
    with db.read() as session:
        reviews = session.execute(
            select(ReviewItemRow).where(
                ReviewItemRow.account_id == account_id, ReviewItemRow.intent_id.in_(payment_ids)
            )
        ).scalars()
        review_of = {}
        for review in reviews:
            review_of[review.id] = review.intent_id
            found[review.intent_id]["reviews"].append({"status": review.status, "decision": review.decision})
        credits = session.execute(
            select(LedgerEntryRow)
            .where(
                LedgerEntryRow.customer_id == account_id,
                LedgerEntryRow.credit_account == customer_account(account_id),
                or_(LedgerEntryRow.ref.in_(payment_ids), LedgerEntryRow.ref.in_(list(review_of))),
            )
            .order_by(LedgerEntryRow.id)
        ).scalars()
        for credit in credits:
            payment_id = review_of.get(credit.ref, credit.ref)
            found[payment_id]["credits"].append(
                {"at": rfc3339(credit.created_at), "amount_usd_cents": credit.amount_cents, "reason": credit.reason}
            )
    return found


def watchers(db: Store, settings: PaymentsSettings, now: datetime) -> dict[str, dict]:
    """Each chain watcher's last report, as the gateway's /readyz shows it."""
    with db.read() as session:
        return watcher_reports(session, settings, now)


def methods(db: Store, settings: PaymentsSettings, now: datetime, only: Method | None = None) -> list[dict]:
    """Each payment method (or `only` that one), whether it takes payments now and why not."""
    with db.read() as session:
        board = load_board(session, settings, now)
    return [
        {"asset": m.asset, "network": m.network, "available": board.reason(m) is None, "reason": board.reason(m)}
        for m in METHODS
        if only is None or m == only
    ]


def balance(db: Store, account_id: str) -> dict:
    """What the account may spend, and what its top-ups on their way will add."""
    with db.read() as session:
        return {
            "available_usd_cents": available_cents(session, account_id),
            "pending_usd_cents": pending_topup_cents(session, account_id),
        }


def ledger(db: Store, account_id: str, page: Page) -> dict:
    """{"items": a page of the balance's movements, newest first, "next_cursor"}."""
    with db.read() as session:
        return page.answer(
            list_entries(session, account_id, page),
            lambda e: (e["id"],),
            lambda e: {
                "at": rfc3339(e["at"]),
                "amount_usd_cents": e["amount_cents"],
                "reason": e["reason"],
                "ref": e["ref"],
            },
        )


def watched(db: Store, network: str, now: datetime, after: str | None, limit) -> dict:
    """One page of at most `limit` (1 to WATCHED_PAGE) addresses a network's watcher must look at: intents still
    inside their monitoring window.

    Pages follow the intent id; `next` is the `after` of the next page, None after the last.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 < limit <= WATCHED_PAGE:
        raise ServiceError.field("limit", f"a page holds 1 to {WATCHED_PAGE} addresses")
    with db.read() as session:
        query = select(PaymentIntentRow).where(PaymentIntentRow.network == network, PaymentIntentRow.watch_until > now)
        if after:
            query = query.where(PaymentIntentRow.id > after)
        rows = list(session.execute(query.order_by(PaymentIntentRow.id).limit(limit)).scalars())
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
