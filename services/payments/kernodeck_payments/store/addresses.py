"""Deposit address allocation: an index per derived address, a pool for Solana (each pool address given once,
then retired with its intent: never handed to anyone else)."""

from datetime import datetime

from sqlalchemy import func, or_, select, update
from sqlmodel import Session

from kernodeck_kit.db import insert_for, is_postgres
from kernodeck_payments.store.tables import AddressCounter, ChainTransferRow, PaymentIntentRow, SolanaPoolAddress


def take_index(session: Session, network: str) -> int:
    """The next derivation index of `network`, never handed out twice.

    One UPDATE ... RETURNING: concurrent intents serialise on the counter row
    and each reads the value its own increment produced.
    """
    session.execute(insert_for(session, AddressCounter).values(network=network, next_index=0).on_conflict_do_nothing())
    taken = session.execute(
        update(AddressCounter)
        .where(AddressCounter.network == network)
        .values(next_index=AddressCounter.next_index + 1)
        .returning(AddressCounter.next_index)
    ).scalar_one()
    return taken - 1


def unfunded_issued_since(session: Session, account_id: str, network: str, since: datetime) -> list[datetime]:
    """When the account's intents on `network` created since `since` were created, those whose address received
    something of the intent's own asset left out (a foreign token's dust funds nothing), oldest first."""
    funded = select(ChainTransferRow.intent_id).where(
        ChainTransferRow.intent_id == PaymentIntentRow.id,
        or_(
            func.lower(ChainTransferRow.token) == func.lower(PaymentIntentRow.token),
            ChainTransferRow.token.is_(None) & PaymentIntentRow.token.is_(None),
        ),
    )
    query = select(PaymentIntentRow.created_at).where(
        PaymentIntentRow.account_id == account_id,
        PaymentIntentRow.network == network,
        PaymentIntentRow.created_at > since,
        ~funded.exists(),
    )
    return list(session.execute(query.order_by(PaymentIntentRow.created_at)).scalars())


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
    return session.execute(
        select(func.count()).select_from(SolanaPoolAddress).where(SolanaPoolAddress.intent_id.is_(None))
    ).scalar_one()


def import_solana_addresses(session: Session, addresses: list[str], now) -> int:
    """Add the addresses not already in the pool; returns how many were new."""
    before = session.execute(select(func.count()).select_from(SolanaPoolAddress)).scalar_one()
    for address in addresses:
        session.execute(
            insert_for(session, SolanaPoolAddress).values(address=address, imported_at=now).on_conflict_do_nothing()
        )
    after = session.execute(select(func.count()).select_from(SolanaPoolAddress)).scalar_one()
    return after - before
