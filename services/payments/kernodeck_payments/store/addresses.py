"""Deposit address allocation: an index per derived address, a pool for Solana (each pool address given once,
then retired with its intent: never handed to anyone else)."""

from datetime import datetime

from sqlalchemy import bindparam, func, or_, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session

from kernodeck_kit.db import insert_for, is_postgres
from kernodeck_payments.store.tables import AddressCounter, ChainTransferRow, PaymentIntentRow, SolanaPoolAddress

# The statements of every intent's address, built once: building a statement (its clauses, its cache key) costs
# about as much as running it.
_TAKE_INDEX = {  # by the dialect's name, for its ON CONFLICT
    name: dialect.insert(AddressCounter)
    .values(network=bindparam("network"), next_index=1)
    .on_conflict_do_update(index_elements=["network"], set_={"next_index": AddressCounter.next_index + 1})
    .returning(AddressCounter.next_index)
    for name, dialect in (("postgresql", postgresql), ("sqlite", sqlite))
}
_FUNDED = select(ChainTransferRow.intent_id).where(
    ChainTransferRow.intent_id == PaymentIntentRow.id,
    or_(
        func.lower(ChainTransferRow.token) == func.lower(PaymentIntentRow.token),
        ChainTransferRow.token.is_(None) & PaymentIntentRow.token.is_(None),
    ),
)
_UNFUNDED_ISSUED = (
    select(PaymentIntentRow.created_at)
    .where(
        PaymentIntentRow.account_id == bindparam("account_id"),
        PaymentIntentRow.network == bindparam("network"),
        PaymentIntentRow.created_at > bindparam("since"),
        ~_FUNDED.exists(),
    )
    .order_by(PaymentIntentRow.created_at)
)
_POOL_LEFT = select(func.count()).select_from(SolanaPoolAddress).where(SolanaPoolAddress.intent_id.is_(None))


def take_index(session: Session, network: str) -> int:
    """The next derivation index of `network`, never handed out twice.

    One INSERT ... ON CONFLICT DO UPDATE ... RETURNING: concurrent intents serialise on the counter row and each
    reads the value its own increment produced (the first one creates the row).
    """
    taken = session.execute(_TAKE_INDEX[session.get_bind().dialect.name], {"network": network}).scalar_one()
    return taken - 1


def unfunded_issued_since(session: Session, account_id: str, network: str, since: datetime) -> list[datetime]:
    """When the account's intents on `network` created since `since` were created, those whose address received
    something of the intent's own asset left out (a foreign token's dust funds nothing), oldest first."""
    values = {"account_id": account_id, "network": network, "since": since}
    return list(session.execute(_UNFUNDED_ISSUED, values).scalars())


def take_solana_address(session: Session, intent_id: str) -> str | None:
    query = (
        select(SolanaPoolAddress)
        .where(SolanaPoolAddress.intent_id.is_(None))
        .order_by(SolanaPoolAddress.imported_at, SolanaPoolAddress.address)
        .limit(1)
    )
    if is_postgres(session.get_bind()):
        query = query.with_for_update(skip_locked=True)
    row = session.execute(query).scalar_one_or_none()
    if row is None:
        return None
    row.intent_id = intent_id
    session.add(row)
    session.flush()
    return row.address


def solana_pool_left(session: Session) -> int:
    return session.execute(_POOL_LEFT).scalar_one()


def import_solana_addresses(session: Session, addresses: list[str], now) -> int:
    """Add the addresses not already in the pool; returns how many were new."""
    before = session.execute(select(func.count()).select_from(SolanaPoolAddress)).scalar_one()
    for address in addresses:
        session.execute(
            insert_for(session, SolanaPoolAddress).values(address=address, imported_at=now).on_conflict_do_nothing()
        )
    after = session.execute(select(func.count()).select_from(SolanaPoolAddress)).scalar_one()
    return after - before
