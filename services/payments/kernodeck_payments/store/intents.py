"""Intents, top-ups and the transfers on their addresses."""

from datetime import datetime

from sqlalchemy import bindparam, insert, or_, select
from sqlmodel import Session

from kernodeck_contracts.statuses import PaymentStatus, TransferStatus
from kernodeck_kit.paging import Page
from kernodeck_kit.rows import copy_as, values_of
from kernodeck_payments.domain.intents import Disposition, PaymentIntent, Purpose, RecordedTransfer, address_key
from kernodeck_payments.domain.topups import Topup
from kernodeck_payments.store import all_rows, one_or_none
from kernodeck_payments.store.tables import ChainTransferRow, PaymentIntentRow, TopupRow

OPEN = (PaymentStatus.AWAITING_TRANSFER, PaymentStatus.SEEN, PaymentStatus.CONFIRMING)

# The statements of every order's payment instructions, built once: building a statement (its clauses, its cache
# key) costs about as much as running it.
_ADD_INTENT = insert(PaymentIntentRow.__table__)  # the table's: the ORM's unit of work would cost as much again
_OPEN_INTENTS = (
    select(PaymentIntentRow)
    .where(
        PaymentIntentRow.account_id == bindparam("account_id"),
        PaymentIntentRow.status.in_(OPEN),
        or_(PaymentIntentRow.expires_at > bindparam("now"), PaymentIntentRow.status != PaymentStatus.AWAITING_TRANSFER),
    )
    .order_by(PaymentIntentRow.created_at)
)
_ORDER_INTENTS_EXPIRED = (
    select(PaymentIntentRow.expires_at)
    .where(
        PaymentIntentRow.account_id == bindparam("account_id"),
        PaymentIntentRow.purpose == Purpose.ORDER,
        PaymentIntentRow.expires_at > bindparam("since"),
        or_(
            PaymentIntentRow.status == PaymentStatus.EXPIRED,
            (PaymentIntentRow.status == PaymentStatus.AWAITING_TRANSFER)
            & (PaymentIntentRow.expires_at <= bindparam("now")),
        ),
    )
    .order_by(PaymentIntentRow.expires_at)
)


def add_intent(session: Session, intent: PaymentIntent) -> None:
    session.execute(_ADD_INTENT, values_of(intent, PaymentIntentRow))


def get_intent(session: Session, intent_id: str, lock: bool = False) -> PaymentIntentRow | None:
    return one_or_none(session, select(PaymentIntentRow).where(PaymentIntentRow.id == intent_id), lock)


def intent_at(session: Session, network: str, address: str, lock: bool = False) -> PaymentIntentRow | None:
    key = address_key(network, address)
    query = select(PaymentIntentRow).where(PaymentIntentRow.network == network, PaymentIntentRow.address_key == key)
    return one_or_none(session, query, lock)


def intents_at(session: Session, network: str, keys: set[str], lock: bool = False) -> dict[str, PaymentIntentRow]:
    """The intents owning these address keys, by key; with `lock`, locked on PostgreSQL in the order of their
    ids, so that two batches lock what they share in the same order and never wait for each other in a circle."""
    query = (
        select(PaymentIntentRow)
        .where(PaymentIntentRow.network == network, PaymentIntentRow.address_key.in_(keys))
        .order_by(PaymentIntentRow.id)
    )
    return {row.address_key: row for row in all_rows(session, query, lock)}


def intents_for(session: Session, account_id: str, reference_ids: list[str]) -> list[PaymentIntentRow]:
    return list(
        session.execute(
            select(PaymentIntentRow)
            .where(PaymentIntentRow.account_id == account_id, PaymentIntentRow.reference_id.in_(reference_ids))
            .order_by(PaymentIntentRow.created_at.desc())
        ).scalars()
    )


def open_intents_of(session: Session, account_id: str, now: datetime) -> list[PaymentIntentRow]:
    """The account's intents still open: instructions not yet expired, or a transfer on its way."""
    return list(session.execute(_OPEN_INTENTS, {"account_id": account_id, "now": now}).scalars())


def order_intents_expired_since(session: Session, account_id: str, since: datetime, now: datetime) -> list[datetime]:
    """When the account's order intents that expired with nothing received since `since` expired, oldest first
    (those past their deadline that the sweep has not marked yet among them)."""
    values = {"account_id": account_id, "since": since, "now": now}
    return list(session.execute(_ORDER_INTENTS_EXPIRED, values).scalars())


def order_intent_ids(session: Session, order_id: str) -> list[str]:
    query = select(PaymentIntentRow.id).where(
        PaymentIntentRow.purpose == Purpose.ORDER, PaymentIntentRow.reference_id == order_id
    )
    return list(session.execute(query).scalars())


def transfers_of(session: Session, intent_id: str) -> list[ChainTransferRow]:
    return list(
        session.execute(
            select(ChainTransferRow)
            .where(ChainTransferRow.intent_id == intent_id)
            .order_by(ChainTransferRow.first_seen_at, ChainTransferRow.txid, ChainTransferRow.index)
        ).scalars()
    )


def transfers_by_intent(session: Session, intent_ids: list[str]) -> dict[str, list[ChainTransferRow]]:
    found: dict[str, list[ChainTransferRow]] = {intent_id: [] for intent_id in intent_ids}
    rows = session.execute(
        select(ChainTransferRow)
        .where(ChainTransferRow.intent_id.in_(intent_ids))
        .order_by(ChainTransferRow.first_seen_at, ChainTransferRow.txid, ChainTransferRow.index)
    ).scalars()
    for row in rows:
        found[row.intent_id].append(row)
    return found


def transfers_in(session: Session, network: str, txids: set[str], lock: bool = False) -> list[ChainTransferRow]:
    """The network's transfers of these transactions; with `lock`, locked on PostgreSQL in key order."""
    query = (
        select(ChainTransferRow)
        .where(ChainTransferRow.network == network, ChainTransferRow.txid.in_(txids))
        .order_by(ChainTransferRow.txid, ChainTransferRow.index)
    )
    return all_rows(session, query, lock)


def get_transfer(session: Session, network: str, txid: str, index: int) -> ChainTransferRow | None:
    return session.get(ChainTransferRow, (network, txid, index))


def due_for_reconciliation(session: Session, now: datetime, limit: int) -> list[str]:
    """Intents past their deadline, still open or holding a confirmed transfer not yet used.

    Before its deadline an intent changes only on a chain event, which reconciles it there and then. The least
    recently reconciled come first, so that those still waiting (for a rate, a confirmation) do not fill every batch.
    """
    unused = select(ChainTransferRow.intent_id).where(
        ChainTransferRow.intent_id.is_not(None),
        ChainTransferRow.state == TransferStatus.CONFIRMED,
        ChainTransferRow.disposition.is_(None),
    )
    query = (
        select(PaymentIntentRow.id)
        .where(
            PaymentIntentRow.expires_at <= now,
            PaymentIntentRow.watch_until > now,
            or_(PaymentIntentRow.status.in_(OPEN), PaymentIntentRow.id.in_(unused)),
        )
        .order_by(PaymentIntentRow.updated_at)
        .limit(limit)
    )
    return list(session.execute(query).scalars())


def pending_topup_cents(session: Session, account_id: str) -> int:
    rows = session.execute(
        select(PaymentIntentRow.amount_usd_cents).where(
            PaymentIntentRow.account_id == account_id,
            PaymentIntentRow.purpose == Purpose.TOPUP,
            PaymentIntentRow.status.in_(OPEN),
        )
    ).scalars()
    return sum(rows)


def topups_of(session: Session, account_id: str, page: Page) -> list[tuple[TopupRow, PaymentIntentRow]]:
    """A page of the account's top-ups with their intents, newest first (one more when there is more)."""
    query = (
        select(TopupRow, PaymentIntentRow)
        .join(PaymentIntentRow, PaymentIntentRow.reference_id == TopupRow.id)
        .where(TopupRow.account_id == account_id)
    )
    return list(session.execute(page.select(query, TopupRow.created_at, TopupRow.id)).all())


def intent_of(row: PaymentIntentRow) -> PaymentIntent:
    return copy_as(PaymentIntent, row, purpose=Purpose(row.purpose), status=PaymentStatus(row.status))


def transfer_of(row: ChainTransferRow) -> RecordedTransfer:
    disposition = Disposition(row.disposition) if row.disposition else None
    return copy_as(RecordedTransfer, row, state=TransferStatus(row.state), disposition=disposition)


def topup_of(row: TopupRow) -> Topup:
    return copy_as(Topup, row)
